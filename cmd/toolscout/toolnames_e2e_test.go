package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolNamesSetting: the config's toolscout.tool_names lists the
// reference memory server's tools under their own names; serve's
// --tool-names wins over it; without either they are domain__tool.
func TestToolNamesSetting(t *testing.T) {
	t.Parallel()
	root, _ := filepath.Abs("../..")
	memory := filepath.Join(root, "node_modules", ".bin", "mcp-server-memory")
	if _, err := os.Stat(memory); err != nil {
		t.Skipf("npm reference servers not installed (%v): make npm", err)
	}
	bin := buildBinary(t)
	for _, tc := range []struct {
		name, key string
		flag      []string
		want      string
	}{
		{"config", "server", nil, "create_entities"},
		{"flag wins", "server", []string{"--tool-names", "qualified"}, "memory__create_entities"},
		{"flag alone", "", []string{"--tool-names", "server"}, "create_entities"},
		{"default", "", nil, "memory__create_entities"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ts := map[string]any{"expose": "eager"}
			if tc.key != "" {
				ts["tool_names"] = tc.key
			}
			conf, _ := json.Marshal(map[string]any{
				"mcpServers": map[string]any{"memory": map[string]any{"command": memory, "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "m.jsonl")}}},
				"toolscout":  ts,
			})
			cfg := filepath.Join(dir, "servers.json")
			if err := os.WriteFile(cfg, conf, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, append([]string{"serve", "--config", cfg, "--embedder", "builtin", "--data-dir", filepath.Join(dir, "data")}, tc.flag...)...)
			cmd.Env = append(os.Environ(), "OLLAMA_HOST=127.0.0.1:9")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "names-e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			names := listedNames(ctx, t, cs)
			if !slices.Contains(names, tc.want) {
				t.Errorf("tools/list = %v, want %s in it", names, tc.want)
			}
		})
	}
}
