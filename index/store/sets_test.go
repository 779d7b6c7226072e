package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
)

// TestSetDir: a set is named by its sources (sorted, absolute, the
// built-in catalog when there are none); setDir creates its folder with
// the marker and sources.json, existingSetDir finds it and, before it
// exists, says there is no index.
func TestSetDir(t *testing.T) {
	if src, err := sourcesOf(nil, nil); err != nil || !slices.Equal(src, []string{"builtin"}) {
		t.Fatalf("sourcesOf() = %q, %v; want builtin", src, err)
	}
	abs, _ := filepath.Abs("b.json")
	src, err := sourcesOf([]string{"b.json", "b.json"}, []string{"/etc/a.json"})
	if err != nil || !slices.Equal(src, []string{"catalog " + abs, "config /etc/a.json"}) {
		t.Fatalf("sourcesOf = %q, %v", src, err)
	}
	data := t.TempDir()
	if _, err := existingSetDir(data, src); !errors.Is(err, index.ErrNoIndex) {
		t.Fatalf("existingSetDir before setDir = %v, want ErrNoIndex", err)
	}
	dir, err := setDir(data, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{setMarker, "sources.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the set folder lacks %s: %v", f, err)
		}
	}
	if got, err := existingSetDir(data, src); err != nil || got != dir {
		t.Errorf("existingSetDir = %q, %v; want %q", got, err, dir)
	}
	if other, _ := setDir(data, []string{"builtin"}); other == dir {
		t.Error("two sets share a folder")
	}
}

// TestOpenSet: with Options.Set the store opens that catalog set's
// folder in the data dir (read-only: only when a writer made it, else
// ErrNoIndex), and Prune keeps it while it removes a set whose sources
// are gone; a store opened on a folder of its own prunes nothing.
func TestOpenSet(t *testing.T) {
	data := t.TempDir()
	set := &Set{Catalogs: []string{filepath.Join(data, "catalog.json")}}
	if _, err := OpenWith(data, Options{Set: set, ReadOnly: true}); !errors.Is(err, index.ErrNoIndex) {
		t.Fatalf("OpenWith(read-only) before a writer made the set = %v, want ErrNoIndex", err)
	}
	gone := &Set{Catalogs: []string{filepath.Join(data, "gone.json")}}
	other, err := OpenWith(data, Options{Set: gone})
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	st, err := OpenWith(data, Options{Set: set})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src, _ := sourcesOf(set.Catalogs, nil)
	if want, _ := existingSetDir(data, src); st.Dir() != want {
		t.Errorf("Dir() = %q, want the set's folder %q", st.Dir(), want)
	}
	removed, _, err := st.Prune()
	if err != nil || len(removed) != 1 || !strings.HasPrefix(removed[0], other.Dir()+" ") {
		t.Errorf("Prune() = %q, %v; want the set of the gone file, %s", removed, err, other.Dir())
	}
	if _, err := os.Stat(st.Dir()); err != nil {
		t.Errorf("Prune removed the store's own set: %v", err)
	}
	own, err := OpenWith(filepath.Join(data, "own"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if removed, _, err := own.Prune(); err == nil || len(removed) > 0 {
		t.Errorf("Prune() of a store not opened as a set = %q, %v; want an error", removed, err)
	}
}

// TestOpenNoIndexes: a store opened for its pins and feedback only
// creates nothing (a set no writer made is ErrNoIndex), opens no index,
// and finds the files of the set's folder.
func TestOpenNoIndexes(t *testing.T) {
	data := t.TempDir()
	set := &Set{Configs: []string{filepath.Join(data, "mcp.json")}}
	if _, err := OpenWith(data, Options{Set: set, NoIndexes: true}); !errors.Is(err, index.ErrNoIndex) {
		t.Fatalf("OpenWith(NoIndexes) before a writer made the set = %v, want ErrNoIndex", err)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Fatalf("OpenWith(NoIndexes) created %d entries in the data dir", len(entries))
	}
	w, err := OpenWith(data, Options{Set: set})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	st, err := OpenWith(data, Options{Set: set, NoIndexes: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Keyword != nil || st.Vectors != nil {
		t.Error("OpenWith(NoIndexes) opened the indexes")
	}
	if want := filepath.Join(w.Dir(), pinsFile); st.Pins().Path() != want {
		t.Errorf("Pins().Path() = %q, want %q", st.Pins().Path(), want)
	}
	if want := filepath.Join(w.Dir(), feedbackFile); st.Feedback().Path() != want {
		t.Errorf("Feedback().Path() = %q, want %q", st.Feedback().Path(), want)
	}
	if len(st.Healed()) != 0 {
		t.Errorf("Healed() = %q", st.Healed())
	}
	if err := st.Close(); err != nil {
		t.Error(err)
	}
}

// TestOpenCheckWritable: with Options.CheckWritable a data dir that
// cannot hold a file is ErrNotWritable, its text the cause's.
func TestOpenCheckWritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("not a folder"), 0o644)
	_, err := OpenWith(filepath.Join(file, "data"), Options{Set: &Set{}, CheckWritable: true})
	if !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("OpenWith(under a file, CheckWritable) = %v, want ErrNotWritable with the cause", err)
	}
	st, err := OpenWith(t.TempDir(), Options{Set: &Set{}, CheckWritable: true})
	if err != nil {
		t.Fatalf("OpenWith(a writable data dir, CheckWritable) = %v", err)
	}
	st.Close()
}

// TestOpenCache: Options.Cache opens the named folder under the data
// dir's eval/ folder, and refuses a name that would lead elsewhere.
func TestOpenCache(t *testing.T) {
	data := t.TempDir()
	st, err := OpenWith(data, Options{Cache: "eval-abc-ollama-m"})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if want := filepath.Join(data, "eval", "eval-abc-ollama-m"); st.Dir() != want {
		t.Errorf("Dir() = %q, want %q", st.Dir(), want)
	}
	for _, bad := range []string{"..", ".", "a/b", `a\b`, "../x"} {
		if st, err := OpenWith(data, Options{Cache: bad}); err == nil {
			st.Close()
			t.Errorf("OpenWith(Cache %q) opened %s, want an error", bad, st.Dir())
		}
	}
	if _, err := OpenWith("", Options{Cache: "x"}); err == nil {
		t.Error("OpenWith(\"\", Cache) opened a folder relative to the working dir, want an error")
	}
}
