package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestConfigDescriptionRanks: the description a config gives a server
// changes the ranking of a request about what the server is for, with
// the real reference servers behind the gateway: without it, keyword
// mode finds no memory tool for "what is stored about Bob?" (no tool has
// those words); with it, a memory tool is in the top 3.
func TestConfigDescriptionRanks(t *testing.T) {
	t.Parallel()
	root := agentViewRoot(t)
	dir := t.TempDir()
	node := func(s string) string {
		return filepath.Join(root, "node_modules", "@modelcontextprotocol", s, "dist", "index.js")
	}
	write := func(name, memoryDesc string) string {
		cfg := map[string]any{"mcpServers": map[string]any{
			"memory":     map[string]any{"command": "node", "args": []string{node("server-memory")}, "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "m.jsonl")}, "description": memoryDesc},
			"everything": map[string]any{"command": "node", "args": []string{node("server-everything")}},
		}}
		data, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const q = "what is stored about Bob?"
	firstMemory := func(cfg, data string) int {
		t.Helper()
		stdout, stderr, code := runCLI(t, "search", "--config", cfg, "--data-dir", filepath.Join(dir, data), "--embedder", "builtin", "--mode", "keyword", "--json", "--limit", "10", q)
		if code != 0 {
			t.Fatalf("search --config %s: exit %d: %s", cfg, code, stderr)
		}
		var resp struct {
			Results []struct {
				Domain string `json:"domain"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(stdout), &resp); err != nil {
			t.Fatalf("search --json: %v\n%s", err, stdout)
		}
		for i, r := range resp.Results {
			if r.Domain == "memory" {
				return i + 1
			}
		}
		return 0
	}
	plain := firstMemory(write("plain.json", ""), "plain")
	described := firstMemory(write("described.json", "Long-term memory: remember facts about people, organisations and projects, and recall what is stored about them"), "described")
	if plain != 0 || described == 0 || described > 3 {
		t.Errorf("search --mode keyword %q: first memory tool at %d without a description, %d with one; want none, then in the top 3", q, plain, described)
	}
}
