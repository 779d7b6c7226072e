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
	t.Parallel()
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
	// chromem-go's layout, as toolscout wrote it there.
	os.MkdirAll(filepath.Join(dir, "vectors", "0a1b2c3d"), 0o755)
	os.WriteFile(filepath.Join(dir, "vectors", "0a1b2c3d", "00000000.gob"), []byte("gob"), 0o644)
	// The old layout goes at the open (the migration step, with a
	// warning), the other set by --prune.
	out, stderr, code := runCLI(t, "index", "--data-dir", dir, "--embedder", "builtin", "--prune")
	if code != 0 || !strings.Contains(out, "other.json is gone") || !strings.Contains(stderr, filepath.Join(dir, "vectors")+": the index of the layout before catalog sets") {
		t.Errorf("index --prune: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "vectors")); err == nil {
		t.Errorf("the old layout's vectors were not removed")
	}
	sets, _ := os.ReadDir(filepath.Join(dir, "sets"))
	if len(sets) != 1 {
		t.Errorf("%d sets left after --prune, want the built-in one", len(sets))
	}
	if out := index("--prune"); !strings.Contains(out, "pruned nothing") {
		t.Errorf("second --prune:\n%s", out)
	}
}

// The catalog is read back from the data dir's cache while its file is
// unchanged, follows every edit of the file, and a damaged cache is
// replaced, never served.
func TestCatalogCacheFollowsTheFile(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(t.TempDir(), "calc.json")
	write := func(desc string) {
		t.Helper()
		doc := `{"domains":[{"name":"calc","tools":[{"name":"add","description":"` + desc + `","inputSchema":{"type":"object"}},` +
			`{"name":"negate","description":"Flips the sign of a number.","inputSchema":{"type":"object"}}]}]}`
		if err := os.WriteFile(cat, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	search := func(q string) (string, string) {
		t.Helper()
		stdout, stderr, code := runCLI(t, "search", "--data-dir", dir, "--embedder", "builtin", "--catalog", cat, "--mode", "keyword", q)
		if code != 0 {
			t.Fatalf("search %q: exit %d\n%s", q, code, stderr)
		}
		return stdout, stderr
	}
	write("Adds two numbers.")
	if out, _ := search("adds numbers"); !strings.Contains(out, "Adds two numbers.") {
		t.Fatalf("first search:\n%s", out)
	}
	caches, _ := filepath.Glob(filepath.Join(dir, "sets", "*", "catalog.bin"))
	if len(caches) != 1 {
		t.Fatalf("catalog caches after the first run: %q, want one", caches)
	}
	if out, _ := search("adds numbers"); !strings.Contains(out, "Adds two numbers.") {
		t.Fatalf("search from the cache:\n%s", out)
	}
	write("Sums a list of numbers.")
	if out, _ := search("sums list"); !strings.Contains(out, "Sums a list of numbers.") || strings.Contains(out, "Adds two") {
		t.Errorf("search after the file changed:\n%s", out)
	}
	os.WriteFile(caches[0], []byte("TSCATV01 not really a cache"), 0o644)
	out, stderr := search("sums list")
	if !strings.Contains(out, "Sums a list of numbers.") || !strings.Contains(stderr, "catalog cache") {
		t.Errorf("search with a damaged cache:\nstdout:\n%s\nstderr:\n%s", out, stderr)
	}
	if _, stderr := search("sums list"); strings.Contains(stderr, "catalog cache") {
		t.Errorf("the damaged cache was not replaced:\n%s", stderr)
	}
	os.WriteFile(cat, []byte(`{"domains":[{"name":"calc","tools":[{"name":"add"}]}]}`), 0o644)
	if _, stderr, code := runCLI(t, "search", "--data-dir", dir, "--embedder", "builtin", "--catalog", cat, "adds"); code == 0 || !strings.Contains(stderr, "inputSchema") {
		t.Errorf("a catalog made invalid after it was cached: exit %d\n%s", code, stderr)
	}
}
