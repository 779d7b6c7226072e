package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Catalog sets keep their own indexes: indexing another catalog into the
// same data dir neither deletes nor re-embeds the built-in catalog's.
func TestCatalogSetsLiveSideBySide(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(t.TempDir(), "other.json")
	os.WriteFile(other, []byte(`{"domains":[{"name":"calc","tools":[{"name":"add","description":"Adds numbers.","inputSchema":{"type":"object"}}]}]}`), 0o644)
	index := func(args ...string) string {
		t.Helper()
		stdout, stderr, code := runCLI(t, append([]string{"index", "--data-dir", dir, "--embedder", "builtin"}, args...)...)
		if code != 0 {
			t.Fatalf("index %v: exit %d\n%s", args, code, stderr)
		}
		return stdout
	}
	if out := index(); !strings.Contains(out, "vectors (builtin/wordvec-v2): 302 added") {
		t.Fatalf("first index:\n%s", out)
	}
	if out := index("--catalog", other); !strings.Contains(out, "1 added, 0 changed, 0 removed") {
		t.Errorf("index of another catalog:\n%s", out)
	}
	if out := index(); !strings.Contains(out, "vectors (builtin/wordvec-v2): 0 added, 0 changed, 0 removed, 302 unchanged") {
		t.Errorf("the built-in set after indexing another catalog:\n%s", out)
	}
	// --prune: the other set's file is gone, and an index of the old
	// single-set layout is left over.
	os.Remove(other)
	os.MkdirAll(filepath.Join(dir, "vectors", "x"), 0o755)
	out := index("--prune")
	if !strings.Contains(out, "other.json is gone") || !strings.Contains(out, "layout before catalog sets") {
		t.Errorf("index --prune:\n%s", out)
	}
	sets, _ := os.ReadDir(filepath.Join(dir, "sets"))
	if len(sets) != 1 {
		t.Errorf("%d sets left after --prune, want the built-in one", len(sets))
	}
	if out := index("--prune"); !strings.Contains(out, "pruned nothing") {
		t.Errorf("second --prune:\n%s", out)
	}
}
