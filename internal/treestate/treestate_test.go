package treestate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDiff(t *testing.T) {
	dir := t.TempDir()
	keep, edit, gone := filepath.Join(dir, "keep"), filepath.Join(dir, "edit"), filepath.Join(dir, "gone")
	for _, p := range []string{keep, edit, gone} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, err := Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(before, before); len(d) != 0 {
		t.Errorf("Diff of a state with itself = %q, want nothing", d)
	}
	os.WriteFile(edit, []byte("xy"), 0o644)
	os.Remove(gone)
	os.WriteFile(filepath.Join(dir, "new"), nil, 0o644)
	later := time.Now().Add(time.Hour)
	os.Chtimes(dir, later, later) // as its new and removed entries do, on a clock fine enough
	after, err := Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(Diff(before, after), "\n")
	for _, want := range []string{dir + " changed", edit + " changed", gone + " was removed", filepath.Join(dir, "new") + " was created"} {
		if !strings.Contains(got, want) {
			t.Errorf("Diff = %q, want a line %q", got, want)
		}
	}
	if strings.Contains(got, keep) {
		t.Errorf("Diff = %q, names the untouched %s", got, keep)
	}
}
