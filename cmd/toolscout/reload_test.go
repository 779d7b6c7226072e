package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReadOnlyRetriesARefusedBuild: a read-only server whose link is
// switched to a build that is not complete yet (toolscout index still
// running into it) refuses it with one warning, and serves it once it is
// complete: replicas that looked before and after the index finished do
// not stay on different builds (issue 34, defect 4: before, a refused
// build was never looked at again).
func TestReadOnlyRetriesARefusedBuild(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	root := t.TempDir()
	catalog := filepath.Join(root, "catalog.json")
	writeCatalog := func(gen string) { writeReportsCatalog(t, catalog, gen, "alpha", "bravo", "charlie") }
	index := func(dir string) { indexBuild(t, bin, catalog, dir) }
	writeCatalog("first")
	first := filepath.Join(root, "first")
	index(first)
	current := filepath.Join(root, "current")
	if err := os.Symlink(first, current); err != nil {
		t.Fatal(err)
	}
	s := startServeHTTP(t, bin, nil, "serve", "--read-only", "--http", "127.0.0.1:0", "--embedder", "builtin",
		"--catalog", catalog, "--data-dir", current, "--reload-interval", "50ms")
	s.waitReady(t)
	cs := connectMCP(t, s, nil, nil)
	defer cs.Close()
	served := func() string {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{"query": "export the report"}})
		if err != nil || res.IsError {
			t.Fatalf("discover_tools: %v %+v", err, res)
		}
		data, _ := json.Marshal(res.StructuredContent)
		for _, gen := range []string{"first", "second"} {
			if strings.Contains(string(data), gen+" build") {
				return gen
			}
		}
		t.Fatalf("an answer from no known build: %s", data)
		return ""
	}
	if gen := served(); gen != "first" {
		t.Fatalf("before the switch the %s build answered", gen)
	}

	// The link switched to a folder toolscout index has not written yet.
	second := filepath.Join(root, "second")
	if err := os.Mkdir(second, 0o755); err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(root, "next")
	if err := os.Symlink(second, next); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, current); err != nil {
		t.Fatal(err)
	}
	waitLog := func(what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(s.logText(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in the log 20 s on:\n%s", what, s.logText())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitLog("is not served")
	if gen := served(); gen != "first" {
		t.Fatalf("with the incomplete build linked, the %s build answered", gen)
	}

	// The index completes: the server serves it without another switch.
	writeCatalog("second")
	index(second)
	deadline := time.Now().Add(20 * time.Second)
	for served() != "second" {
		if time.Now().After(deadline) {
			t.Fatalf("the completed build was not served 20 s after toolscout index ended:\n%s", s.logText())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The line is logged once the swap is done, so just after the first
	// answer from the new build (a CI run read the log in between).
	waitLog("refused before is served now")
	if n := strings.Count(s.logText(), "is not served"); n != 1 {
		t.Errorf("the refusal was warned %d times, want once:\n%s", n, s.logText())
	}
}
