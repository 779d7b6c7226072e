package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/treestate"
)

// TestServeReadOnly: two `serve --read-only` processes serve one data
// dir that `toolscout index` built, at once: both open its keyword index
// on disk (neither rebuilds one in memory), both answer discover_tools,
// and the data dir is left exactly as it was.
func TestServeReadOnly(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	if out, err := exec.Command(bin, "index", "--data-dir", dir, "--embedder", "builtin").CombinedOutput(); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	before, err := treestate.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	var servers []*httpServe
	for range 2 {
		s := startServeHTTP(t, bin, nil, "serve", "--read-only", "--http", "127.0.0.1:0", "--embedder", "builtin", "--data-dir", dir)
		s.waitReady(t)
		servers = append(servers, s)
	}
	for i, s := range servers {
		cs := connectMCP(t, s, nil, nil)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{"query": "restart the web deployment", "limit": 3}})
		if err != nil || res.IsError {
			t.Fatalf("server %d: discover_tools: %v %+v", i, err, res)
		}
		if sc, _ := res.StructuredContent.(map[string]any); sc == nil || len(sc["results"].([]any)) == 0 {
			t.Errorf("server %d: discover_tools found nothing: %+v", i, res.StructuredContent)
		}
		cs.Close()
	}
	// Indexing while replicas read the data dir fails, saying why, and
	// writes nothing (it once fell back to a keyword index in memory and
	// said "indexed ... into DIR", leaving the one on disk stale).
	out, err := exec.Command(bin, "index", "--data-dir", dir, "--embedder", "builtin").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "in use by another toolscout process") {
		t.Errorf("index while read-only servers run: %v\n%s", err, out)
	}
	// Indexing while replicas read the data dir fails, saying why, and
	// leaves the indexes alone (it once fell back to a keyword index in
	// memory and said "indexed ... into DIR", the one on disk stale); only
	// the set's bookkeeping (sources.json: when it was last used) moves.
	mid, err := treestate.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := exec.Command(bin, "index", "--data-dir", dir, "--embedder", "builtin").CombinedOutput()
	if err == nil || !strings.Contains(string(idx), "in use by another toolscout process") {
		t.Errorf("index while read-only servers run: %v\n%s", err, idx)
	}
	post, err := treestate.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range treestate.Diff(mid, post) {
		if !strings.Contains(d, "sources.json") && !strings.Contains(d, "sets/") {
			t.Errorf("index refused, but changed the data dir: %s", d)
		}
		if strings.Contains(d, "keyword.bleve") || strings.Contains(d, "vectors") || strings.Contains(d, "catalog.") {
			t.Errorf("index refused, but changed an index file: %s", d)
		}
	}
	before = post
	for i, s := range servers {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("server %d still runs 30 s after SIGTERM:\n%s", i, s.dump())
		}
		if log := s.logText(); s.err != nil || strings.Contains(log, "in memory") {
			t.Errorf("server %d: exit %v, log:\n%s", i, s.err, log)
		}
	}
	after, err := treestate.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range treestate.Diff(before, after) {
		t.Errorf("serve --read-only changed the data dir: %s", d)
	}
}

// TestServeReadOnlyRefuses: without an index to serve, serve --read-only
// exits at once saying which command builds it, creating nothing; with
// --config it is a usage error.
func TestServeReadOnlyRefuses(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "data")
	_, stderr, code := runCLI(t, "serve", "--read-only", "--data-dir", missing, "--embedder", "builtin")
	if code != 1 || !strings.Contains(stderr, "toolscout index --data-dir "+missing) {
		t.Errorf("serve --read-only on an empty data dir: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("serve --read-only created %s", missing)
	}
	cfg := filepath.Join(t.TempDir(), "servers.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {}}`), 0o644)
	if _, stderr, code := runCLI(t, "serve", "--read-only", "--config", cfg, "--data-dir", missing); code != 2 || !strings.Contains(stderr, "--read-only serves catalogs") {
		t.Errorf("serve --read-only --config: exit %d, %q", code, stderr)
	}
}
