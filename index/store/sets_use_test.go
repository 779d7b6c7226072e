package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSetUseRecorded: opening a set records its use in sources.json, but
// not again within useGrain of the last one (a synced write at every
// start); an older use, other sources, or a file that is not a
// sources.json are written again.
func TestSetUseRecorded(t *testing.T) {
	src := []string{"catalog /somewhere/catalog.json"}
	for _, c := range []struct {
		name    string
		before  string // sources.json before the open; "" for none
		rewrite bool
	}{
		{"none yet", "", true},
		{"used a minute ago", sourcesJSON(t, src, time.Now().Add(-time.Minute)), false},
		{"used two hours ago", sourcesJSON(t, src, time.Now().Add(-2*time.Hour)), true},
		{"used in the future", sourcesJSON(t, src, time.Now().Add(time.Hour)), true},
		{"other sources", sourcesJSON(t, []string{"builtin"}, time.Now().Add(-time.Minute)), true},
		{"not json", "{\"sources\": [", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			dir := setPath(data, src)
			path := filepath.Join(dir, "sources.json")
			if c.before != "" {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(c.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			if _, err := setDir(data, src); err != nil {
				t.Fatal(err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if rewrote := string(after) != c.before; rewrote != c.rewrite {
				t.Fatalf("sources.json rewritten = %v, want %v (now %s)", rewrote, c.rewrite, after)
			}
			var s setSources
			if err := json.Unmarshal(after, &s); err != nil || !slices.Equal(s.Sources, src) {
				t.Fatalf("sources.json after the open = %s (%v), want the sources %q", after, err, src)
			}
			if c.rewrite && s.LastUsed.Before(start.Add(-time.Second)) {
				t.Fatalf("last use recorded %v, want this open's (%v)", s.LastUsed, start)
			}
		})
	}
}

// sourcesJSON is a sources.json of src last used at used.
func sourcesJSON(t *testing.T, src []string, used time.Time) string {
	t.Helper()
	data, err := json.MarshalIndent(setSources{Sources: src, LastUsed: used.UTC()}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
