package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/index"
)

// TestSetDir: a set is named by its sources (sorted, absolute, the
// built-in catalog when there are none); SetDir creates its folder with
// the marker and sources.json, ExistingSetDir finds it and, before it
// exists, says there is no index.
func TestSetDir(t *testing.T) {
	if src, err := SetSources(nil, nil); err != nil || !slices.Equal(src, []string{"builtin"}) {
		t.Fatalf("SetSources() = %q, %v; want builtin", src, err)
	}
	abs, _ := filepath.Abs("b.json")
	src, err := SetSources([]string{"b.json", "b.json"}, []string{"/etc/a.json"})
	if err != nil || !slices.Equal(src, []string{"catalog " + abs, "config /etc/a.json"}) {
		t.Fatalf("SetSources = %q, %v", src, err)
	}
	data := t.TempDir()
	if _, err := ExistingSetDir(data, src); !errors.Is(err, index.ErrNoIndex) {
		t.Fatalf("ExistingSetDir before SetDir = %v, want ErrNoIndex", err)
	}
	dir, err := SetDir(data, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{setMarker, "sources.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the set folder lacks %s: %v", f, err)
		}
	}
	if got, err := ExistingSetDir(data, src); err != nil || got != dir {
		t.Errorf("ExistingSetDir = %q, %v; want %q", got, err, dir)
	}
	if other, _ := SetDir(data, []string{"builtin"}); other == dir {
		t.Error("two sets share a folder")
	}
}
