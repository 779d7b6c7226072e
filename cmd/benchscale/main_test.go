package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/synth"
	"github.com/toolscout/toolscout/search"
)

// TestWriteCatalog: the catalog file written a domain at a time is the
// whole catalog as one json.Marshal wrote it, byte for byte, and loads
// as a valid catalog; the changed one differs in 1% of the tools'
// descriptions and nothing else.
func TestWriteCatalog(t *testing.T) {
	specs := synth.Specs(1234, 100, 1)
	dir := t.TempDir()
	base, changed := filepath.Join(dir, "base.json"), filepath.Join(dir, "changed.json")
	if err := writeCatalog(base, specs, false); err != nil {
		t.Fatal(err)
	}
	if err := writeCatalog(changed, specs, true); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(map[string]any{"domains": specs})
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSuffix(string(got), "\n") != string(want) {
		t.Fatalf("writeCatalog wrote %d bytes unlike json.Marshal's %d", len(got), len(want))
	}
	cat, err := index.LoadCatalogFiles([]string{base})
	if err != nil {
		t.Fatal(err)
	}
	if cat.Len() != toolCount(specs) {
		t.Fatalf("the catalog has %d tools, want %d", cat.Len(), toolCount(specs))
	}
	ch, err := index.LoadCatalogFiles([]string{changed})
	if err != nil {
		t.Fatal(err)
	}
	diff := 0
	for i, tl := range cat.Tools() {
		c := ch.Tools()[i]
		if c.QualifiedName != tl.QualifiedName {
			t.Fatalf("tool %d is %s in the changed catalog, %s in the base", i, c.QualifiedName, tl.QualifiedName)
		}
		if c.Description != tl.Description {
			diff++
		}
	}
	if want := (toolCount(specs) + 99) / 100; diff != want {
		t.Errorf("%d descriptions changed, want %d (1%%)", diff, want)
	}
	for i := range specs { // writeCatalog must not change the specs it is given
		for _, tl := range specs[i].Tools {
			if strings.Contains(tl.Description, "Changed for the benchmark") {
				t.Fatalf("writeCatalog changed the caller's spec of %s", tl.Name)
			}
		}
	}
}

// TestSearchers: every searcher sends every query once, each starting
// at its own, and the first error stops them all and is returned.
func TestSearchers(t *testing.T) {
	qs := []string{"a", "b", "c", "d", "e"}
	var calls atomic.Int64
	firsts := make([]string, 4)
	lat, err := searchers(context.Background(), 4, qs, func(_ context.Context, s int, q string) error {
		if calls.Add(1); firsts[s] == "" {
			firsts[s] = q
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 4*len(qs) || calls.Load() != int64(4*len(qs)) {
		t.Fatalf("%d latencies from %d calls, want %d", len(lat), calls.Load(), 4*len(qs))
	}
	if strings.Join(firsts, "") != "abcd" {
		t.Errorf("searchers started at %q, want each at its own query (abcd)", firsts)
	}
	boom := errors.New("boom")
	calls.Store(0)
	// Bounded: a searchers that did not stop the others would fail the
	// test here, not hang it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = searchers(ctx, 16, qs, func(ctx context.Context, s int, q string) error {
		calls.Add(1)
		if s == 3 {
			return boom
		}
		<-ctx.Done() // the others wait until the error stops them
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("searchers = %v, want the searcher's error", err)
	}
	if calls.Load() > 16 {
		t.Errorf("%d calls after the first error, want each searcher stopped (at most 16)", calls.Load())
	}
}

// TestParseCounts: -concurrency takes positive numbers separated by
// commas, and says what it wants otherwise.
func TestParseCounts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"1,4,16", []int{1, 4, 16}},
		{" 2 , 8", []int{2, 8}},
		{"0", nil},
		{"1,,4", nil},
		{"four", nil},
		{"-1", nil},
	} {
		got, err := parseCounts("-concurrency", tc.in)
		if tc.want == nil {
			if err == nil || !strings.Contains(err.Error(), "positive numbers") {
				t.Errorf("parseCounts(%q) = %v, %v, want an error saying what it wants", tc.in, got, err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Fatalf("parseCounts(%q) = %v, %v, want %v", tc.in, got, err, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("parseCounts(%q) = %v, want %v", tc.in, got, tc.want)
			}
		}
	}
}

// TestParseModes: -modes takes search modes separated by commas and
// names the valid ones otherwise.
func TestParseModes(t *testing.T) {
	got, err := parseModes("keyword, hybrid")
	if err != nil || len(got) != 2 || got[0] != search.Keyword || got[1] != search.Hybrid {
		t.Errorf("parseModes(%q) = %v, %v, want [keyword hybrid]", "keyword, hybrid", got, err)
	}
	for _, in := range []string{"", "keyword,,hybrid", "fuzzy"} {
		if got, err := parseModes(in); err == nil || !strings.Contains(err.Error(), "-modes") {
			t.Errorf("parseModes(%q) = %v, %v, want an error naming -modes", in, got, err)
		}
	}
}

// TestRunReusedNeedsRunFolder: -reuse on a folder without a catalog and
// a data dir says what it wants instead of measuring nothing.
func TestRunReusedNeedsRunFolder(t *testing.T) {
	err := runReused(profileOptions{reuse: t.TempDir(), modes: "keyword", rounds: 1}, 10, 1, options{concurrency: "1"})
	if err == nil || !strings.Contains(err.Error(), "-work") {
		t.Errorf("runReused on an empty folder = %v, want an error pointing at -work", err)
	}
}
