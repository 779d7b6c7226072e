package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/synth"
	"github.com/toolscout/toolscout/search"
)

// flipCase is what a byte flipped in the middle of one kind of file in a
// catalog set must lead to: a heal (one warning naming what was rebuilt,
// none on the next start) or nothing at all, the file being harmless by
// design (why says why); with both heal and why, either. Every way, the
// ranked lists must be those of the clean data dir.
type flipCase struct {
	pattern string // filepath.Match against the path inside the set
	heal    string // a word of the warning; "" when harmless
	why     string // why a harmless file is harmless
}

var flipCases = []flipCase{
	{pattern: "catalog.bin", heal: "catalog cache"},
	{pattern: "catalog.delta", heal: "catalog cache"},
	{pattern: "fit-*.bin", heal: "statistics"},
	{pattern: "vectors/*.delta.snap", heal: "vector delta"},
	{pattern: "vectors/*.snap", heal: "vector collection"},
	{pattern: "keyword.bleve/*", heal: "keyword index"},
	{pattern: "keyword.bleve/store/root.bolt", heal: "keyword index", why: "bbolt checks its meta pages and toolscout the values it keeps there " +
		"(the field lengths; a changed manifest or catalog hash only makes the next change index more tools again), " +
		"but Bleve's own records have no checksum, and most pages are free"},
	{pattern: "keyword.bleve/store/*", heal: "keyword index"},
	{pattern: "sources.json", why: "written again by every start, read only by --prune"},
	{pattern: ".toolscout-set", why: "its name marks the set, not its content"},
	{pattern: ".toolscout-format", why: "one that fails its checksum is taken for missing: the migration step runs again, finds nothing to migrate, and writes it again"},
}

// caseOf returns the case of a file in the set (the first that matches).
func caseOf(rel string) (flipCase, bool) {
	for _, c := range flipCases {
		if ok, _ := filepath.Match(c.pattern, rel); ok {
			return c, true
		}
	}
	return flipCase{}, false
}

// TestFlippedByteHealsOrIsHarmless flips one byte in the middle of each
// file of a catalog set in turn (a copy of the data dir each time) and
// searches it through the product's own path: the ranked lists of 20
// queries in each mode must be the clean data dir's, and a damaged file
// must be said in one warning, the first time only. The set holds every
// kind of file: it was indexed, then re-indexed after an edit of 5% of
// its tools, so the catalog and vectors have deltas and the statistics
// were fitted on the edited catalog.
func TestFlippedByteHealsOrIsHarmless(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("searches 20 copies of a data dir")
	}
	// 200 tools and 20 queries: each query's ten results are as large a
	// share of the catalog as 40 queries' of 400 tools, at half the CPU
	// (each of the 20 copies is searched once or twice in three modes).
	specs := synth.Specs(200, 20, 7)
	catalog := filepath.Join(t.TempDir(), "catalog.json")
	writeSpecs(t, catalog, specs)
	clean := t.TempDir()
	cliOK(t, "index", "--catalog", catalog, "--data-dir", clean, "--embedder", "builtin")
	for d := range specs {
		for i := range specs[d].Tools {
			if i%20 == 3 { // 10 of 200 tools
				specs[d].Tools[i].Description += " Also keeps an audit trail of every change."
			}
		}
	}
	writeSpecs(t, catalog, specs)
	cliOK(t, "index", "--catalog", catalog, "--data-dir", clean, "--embedder", "builtin")

	queries := synth.Queries(20, 3)
	want, warned := rankings(t, catalog, clean, queries)
	if warned != "" {
		t.Fatalf("the clean data dir warns:\n%s", warned)
	}
	sets, _ := filepath.Glob(filepath.Join(clean, "sets", "*"))
	if len(sets) != 1 {
		t.Fatalf("sets = %v, want one", sets)
	}
	var files []string
	filepath.WalkDir(sets[0], func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(sets[0], p)
			files = append(files, rel)
		}
		return nil
	})
	seen := map[string]bool{}
	for _, rel := range files {
		c, ok := caseOf(rel)
		if !ok {
			t.Errorf("%s: a kind of file this test does not know: add it to flipCases", rel)
			continue
		}
		seen[c.pattern] = true
		t.Run(rel, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, clean, dir)
			setDir := filepath.Join(dir, "sets", filepath.Base(sets[0]))
			p := filepath.Join(setDir, rel)
			flipMiddle(t, p)
			got, warned := rankings(t, catalog, dir, queries)
			if diff := differing(got, want); diff != "" {
				t.Errorf("after flipping a byte of %s, ranked lists differ from the clean data dir's:\n%s", rel, diff)
			}
			switch {
			case c.heal != "" && c.why != "" && warned == "":
			case c.heal == "" && warned != "":
				t.Errorf("flipping %s (harmless: %s) warns:\n%s", rel, c.why, warned)
			case c.heal != "" && (strings.Count(warned, "level=WARN") != 1 || !strings.Contains(warned, c.heal)):
				t.Errorf("flipping a byte of %s: want one warning about the %s, got:\n%s", rel, c.heal, warned)
			}
			if c.heal == "" {
				return
			}
			again, warned := rankings(t, catalog, dir, queries)
			if warned != "" {
				t.Errorf("the start after healing %s warns again:\n%s", rel, warned)
			}
			if diff := differing(again, want); diff != "" {
				t.Errorf("the start after healing %s ranks differently from the clean data dir:\n%s", rel, diff)
			}
		})
	}
	for _, c := range flipCases {
		if !seen[c.pattern] {
			t.Errorf("the data dir holds no %s: the test no longer covers that kind", c.pattern)
		}
	}
}

func writeSpecs(t *testing.T, path string, specs []index.DomainSpec) {
	t.Helper()
	cat, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	data, err := synth.CatalogJSON(cat)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func cliOK(t *testing.T, args ...string) {
	t.Helper()
	if _, stderr, code := runCLI(t, args...); code != 0 {
		t.Fatalf("toolscout %v: exit %d\n%s", args, code, stderr)
	}
}

// rankings opens the data dir as `toolscout search` does and returns the
// ranked lists (names and scores) of each query in each mode, and what
// was logged.
func rankings(t *testing.T, catalog, dataDir string, queries []string) ([]string, string) {
	t.Helper()
	var g globalFlags
	var stderr bytes.Buffer
	fs := newFlagSet("search", "search", &stderr)
	g.register(fs, "warn")
	if _, err := parseFlags(fs, []string{"--catalog", catalog, "--data-dir", dataDir, "--embedder", "builtin"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, _, err := g.openApp(ctx, &stderr, true)
	if err != nil {
		t.Fatalf("open %s: %v\n%s", dataDir, err, stderr.String())
	}
	defer a.Close()
	var out []string
	for _, m := range []search.Mode{search.Keyword, search.Semantic, search.Hybrid} {
		for _, q := range queries {
			resp, err := a.eng.Search(ctx, search.Request{Query: q, Mode: m, Limit: 10})
			if err != nil {
				t.Fatalf("Search(%q, %s): %v", q, m, err)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s %q (%s%s):", m, q, resp.Mode, resp.Notice)
			for _, r := range resp.Results {
				fmt.Fprintf(&b, " %s %.6f", r.Tool.QualifiedName, r.Score)
			}
			out = append(out, b.String())
		}
	}
	return out, stderr.String()
}

// differing says how many ranked lists differ, and shows the first.
func differing(got, want []string) string {
	n, first := 0, ""
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			if n == 0 && i < len(got) {
				first = fmt.Sprintf(" got %s\nwant %s", got[i], want[i])
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d lists differ; the first:\n%s", n, len(want), first)
}

// flipMiddle inverts the bits of a byte in the middle of the file at p,
// keeping its modification time (as damage on a disk does): the last
// byte of the middle 4-byte word, which in a matrix of little-endian
// float32 (a vector snapshot's) holds the sign and exponent, so that the
// flip matters there (a flip of a float's lowest byte changed no
// ranking in this test).
func flipMiddle(t *testing.T, p string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil || len(data) == 0 {
		t.Fatalf("read %s: %d bytes, %v", p, len(data), err)
	}
	at := len(data)/2 | 3
	if at >= len(data) {
		at = len(data) / 2
	}
	data[at] ^= 0xff
	if err := os.WriteFile(p, data, fi.Mode()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the folder src into dst with every file's modification
// time (cp -a: a vector snapshot is tied to its export by size and time).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, rel)
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, fi.Mode()); err != nil {
			return err
		}
		return os.Chtimes(target, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, rel := range dirs {
		fi, err := os.Stat(filepath.Join(src, rel))
		if err == nil {
			os.Chtimes(filepath.Join(dst, rel), fi.ModTime(), fi.ModTime())
		}
	}
}
