package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree creates files (path → content; a path ending in / is a
// folder) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		p = filepath.Join(root, p)
		if strings.HasSuffix(p, string(filepath.Separator)) || content == "/" {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// mustExist fails for each path under root that is gone.
func mustExist(t *testing.T, what, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s: %s was deleted: %v", what, filepath.Join(root, p), err)
		}
	}
}

// TestPruneDeletesOnlyWhatItCreated: `index --prune` removes the set
// folders that carry toolscout's marker (the old layout's indexes that
// look like toolscout wrote them go at the open, by the migration step);
// it leaves alone (and says so) a folder without the marker, and
// anything behind a symbolic link, a symlinked sets/ above all; a
// foreign DATA_DIR/vectors is left alone.
func TestPruneDeletesOnlyWhatItCreated(t *testing.T) {
	cat := filepath.Join(t.TempDir(), "calc.json")
	writeTree(t, filepath.Dir(cat), map[string]string{"calc.json": `{"domains":[{"name":"calc","tools":[{"name":"add","description":"Adds numbers.","inputSchema":{"type":"object"}}]}]}`})
	index := func(dir string, args ...string) (string, string, int) {
		t.Helper()
		return runCLI(t, append([]string{"index", "--data-dir", dir, "--embedder", "builtin", "--catalog", cat}, args...)...)
	}

	t.Run("symlinked sets", func(t *testing.T) {
		user := t.TempDir()
		writeTree(t, user, map[string]string{"photos/cat.jpg": "jpeg", "0123456789ab/notes.txt": "mine", "readme.txt": "mine"})
		dir := t.TempDir()
		if err := os.Symlink(user, filepath.Join(dir, "sets")); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		_, stderr, code := index(dir, "--prune")
		if code == 0 || !strings.Contains(stderr, "symbolic link") {
			t.Errorf("index --prune with a symlinked sets/: exit %d, stderr %q; want an error naming the link", code, stderr)
		}
		mustExist(t, "symlinked sets/", user, "photos/cat.jpg", "0123456789ab/notes.txt", "readme.txt")
		if entries, _ := os.ReadDir(user); len(entries) != 3 {
			t.Errorf("toolscout wrote into the folder sets/ links to: %d entries, want 3", len(entries))
		}
	})

	t.Run("foreign folders", func(t *testing.T) {
		dir := t.TempDir()
		other := filepath.Join(t.TempDir(), "other.json")
		writeTree(t, filepath.Dir(other), map[string]string{"other.json": `{"domains":[{"name":"sub","tools":[{"name":"sub","description":"Subtracts.","inputSchema":{"type":"object"}}]}]}`})
		if _, stderr, code := runCLI(t, "index", "--data-dir", dir, "--embedder", "builtin", "--catalog", other); code != 0 {
			t.Fatalf("index of the set to prune: exit %d\n%s", code, stderr)
		}
		os.Remove(other)
		behind := t.TempDir()
		writeTree(t, behind, map[string]string{"keep/me.txt": "mine", "index_meta.json": `{"storage":"boltdb","index_type":"scorch"}`})
		writeTree(t, dir, map[string]string{
			// A foreign DATA_DIR/vectors, and the old layout's keyword
			// index as toolscout wrote it.
			"vectors/notes.txt":                         "mine",
			"vectors/0a1b2c3d/00000000.gob":             "gob",
			"keyword.bleve/index_meta.json":             `{"storage":"boltdb","index_type":"scorch"}`,
			"keyword.bleve/store/root.bolt":             "bolt",
			"keyword.bleve/store/000000000003.zap":      "zap",
			"sets/abcdefabcdef/notes.txt":               "no marker, no sources.json",
			"sets/photos/cat.jpg":                       "jpeg",
			"sets/fedcbafedcba/" + ".toolscout-set.txt": "not the marker",
		})
		if err := os.Symlink(behind, filepath.Join(dir, "sets", "0123456789ab")); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		stdout, stderr, code := index(dir, "--prune")
		if code != 0 {
			t.Fatalf("index --prune: exit %d\n%s", code, stderr)
		}
		mustExist(t, "foreign folders", dir, "vectors/notes.txt", "vectors/0a1b2c3d/00000000.gob", "sets/abcdefabcdef/notes.txt", "sets/photos/cat.jpg", "sets/fedcbafedcba", "sets/0123456789ab")
		mustExist(t, "behind a link in sets/", behind, "keep/me.txt", "index_meta.json")
		// The old layout's keyword index is the migration step's: removed
		// by the open, with a warning (a foreign vectors/ is left alone).
		if want := filepath.Join(dir, "keyword.bleve") + ": the index of the layout before catalog sets"; !strings.Contains(stderr, want) {
			t.Errorf("index does not warn %q:\n%s", want, stderr)
		}
		if strings.Contains(stderr+stdout, filepath.Join(dir, "vectors")+":") {
			t.Errorf("index says it did something to the foreign DATA_DIR/vectors:\n%s%s", stdout, stderr)
		}
		for _, want := range []string{
			"other.json is gone",
			filepath.Join(dir, "sets", "abcdefabcdef") + " (no .toolscout-set",
			filepath.Join(dir, "sets", "photos") + " (not named like a catalog set",
			filepath.Join(dir, "sets", "0123456789ab") + " (a symbolic link",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("index --prune does not say %q:\n%s", want, stdout)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "keyword.bleve")); err == nil {
			t.Errorf("the old layout's keyword index was not removed")
		}
		marked, _ := filepath.Glob(filepath.Join(dir, "sets", "*", ".toolscout-set"))
		if len(marked) != 1 {
			t.Errorf("set folders with a marker after --prune: %q, want the current set's", marked)
		}
	})
}
