package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentViewRoot returns the repository root, or skips when the npm
// reference servers of eval/agentview/mcp.json are missing.
func agentViewRoot(t *testing.T) string {
	t.Helper()
	root, _ := filepath.Abs("../..")
	for _, s := range []string{"server-memory", "server-filesystem", "server-everything"} {
		if _, err := os.Stat(filepath.Join(root, "node_modules", "@modelcontextprotocol", s, "dist", "index.js")); err != nil {
			needNode(t, "npm packages are missing: run `npm ci` (make test does)")
		}
	}
	return root
}

// evalConfig runs the built toolscout's eval with args, the repository
// root as TOOLSCOUT_ROOT (eval/agentview/mcp.json names its servers
// under it) and a TMPDIR of the test's (eval --config's temporary data
// dirs), and returns its stderr and exit status. A process, not
// in-process under -race: the environment is its own, so these tests
// run in parallel, and eval's concurrency is raced in its package.
func evalConfig(t *testing.T, args ...string) (string, int) {
	t.Helper()
	_, stderr, code := runBinary(t, []string{"TOOLSCOUT_ROOT=" + agentViewRoot(t), "TMPDIR=" + t.TempDir()}, append([]string{"eval"}, args...)...)
	return stderr, code
}

// TestEvalConfigAgentView runs the checked-in agent-view set end to end:
// the three npm reference servers of eval/agentview/mcp.json connected as
// serve connects them, every request scored against what they list.
func TestEvalConfigAgentView(t *testing.T) {
	t.Parallel()
	root := agentViewRoot(t)
	dir := t.TempDir()
	out, perQuery := filepath.Join(dir, "report.json"), filepath.Join(dir, "q.jsonl")
	stderr, code := evalConfig(t, "--config", filepath.Join(root, "eval", "agentview", "mcp.json"),
		"--queries", filepath.Join(root, "eval", "agentview", "queries.jsonl"), "--embedder", "builtin",
		"--modes", "keyword,hybrid", "--format", "json", "--out", out, "--per-query", perQuery)
	if code != 0 {
		t.Fatalf("eval --config: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Datasets []struct {
			Name    string
			Tools   int
			Queries int
			Runs    []struct {
				Mode    string
				Metrics map[string]float64
			}
		}
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	lines, err := os.ReadFile(filepath.Join(root, "eval", "agentview", "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Count(strings.TrimSpace(string(lines)), "\n") + 1
	if len(rep.Datasets) != 1 {
		t.Fatalf("datasets = %+v, want one", rep.Datasets)
	}
	ds := rep.Datasets[0]
	// memory 9, filesystem 14 and everything's at least 13 tools.
	if ds.Name != "agentview" || ds.Tools < 36 || ds.Queries != want || len(ds.Runs) != 2 || ds.Runs[1].Mode != "hybrid" || ds.Runs[1].Metrics["ndcg@10"] <= 0 {
		t.Errorf("report = %+v, want agentview with %d queries over the three servers' tools", ds, want)
	}
	pq, err := os.ReadFile(perQuery)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(pq), "\n"); got != 2*want {
		t.Errorf("--per-query: %d lines, want %d", got, 2*want)
	}
}

func TestEvalConfigErrors(t *testing.T) {
	t.Parallel()
	root := agentViewRoot(t)
	memory := filepath.Join(root, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"mcpServers": {"memory": {"command": "node", "args": ["`+memory+`"], "env": {"MEMORY_FILE_PATH": "`+filepath.Join(dir, "m.jsonl")+`"}}}}`)
	broken := write("broken.json", `{"mcpServers": {"memory": {"command": "node", "args": ["`+memory+`"], "env": {"MEMORY_FILE_PATH": "`+filepath.Join(dir, "m.jsonl")+`"}},
	  "gone": {"command": "/nonexistent/server"}}}`)
	queries := write("queries.jsonl", `{"id": "a", "query": "what is stored about Bob?", "relevant": ["memory/search_nodes"]}`+"\n")
	unknownTool := write("tool.jsonl", `{"id": "a", "query": "x", "relevant": ["memory/recall"]}`+"\n")
	unknownDomain := write("domain.jsonl", `{"id": "a", "query": "x", "relevant": ["notes/read"]}`+"\n")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"queries without config", []string{"--queries", queries}, []string{"--queries", "needs --config"}},
		{"config without queries", []string{"--config", good}, []string{"--config needs --queries"}},
		{"queries and dataset", []string{"--config", good, "--queries", queries, "--dataset", dir}, []string{"--queries and --dataset"}},
		{"missing queries file", []string{"--config", good, "--queries", filepath.Join(dir, "none.jsonl")}, []string{"--queries", "none.jsonl"}},
		{"server that fails to start", []string{"--config", broken, "--queries", queries}, []string{"server gone", "was not found", `"disabled": true`}},
		{"tool no server lists", []string{"--config", good, "--queries", unknownTool}, []string{"tool.jsonl:1", `"memory/recall" is not in the catalog`, "memory lists", "search_nodes"}},
		{"domain no config names", []string{"--config", good, "--queries", unknownDomain}, []string{"domain.jsonl:1", `no domain "notes"`, "memory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderr, code := evalConfig(t, append([]string{"--embedder", "builtin", "--modes", "keyword"}, tc.args...)...)
			if code == 0 {
				t.Fatalf("eval %v: exit 0, want an error", tc.args)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("eval %v: stderr %q, want %q in it", tc.args, stderr, w)
				}
			}
		})
	}
	stderr, code := evalConfig(t, "--embedder", "builtin", "--modes", "keyword", "--config", good, "--queries", queries)
	if code != 0 {
		t.Errorf("eval with a good config: exit %d: %s", code, stderr)
	}
}
