package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/fileio"
	"github.com/toolscout/toolscout/internal/indextest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Damage anywhere (a flipped byte, a file cut short) is noticed: the
// cache is not used, is removed and reported, and nothing panics.
func TestCachedCatalogDamage(t *testing.T) {
	good := cacheFile(t, indextest.MustCatalog(t, richCatalog))
	key := hex.EncodeToString(good[len("TSCATV01") : len("TSCATV01")+32])
	var cases [][]byte
	for _, cut := range []int{0, 7, 40, 44, 60, len(good) / 2, len(good) - 1} {
		cases = append(cases, good[:cut])
	}
	for _, at := range []int{len("TSCATV01") + 32, 50, 70, len(good) / 3, len(good) - 2} {
		b := append([]byte(nil), good...)
		b[at] ^= 0x20
		cases = append(cases, b)
	}
	for i, data := range cases {
		dir := t.TempDir()
		path := filepath.Join(dir, index.CatalogCacheFile)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := &Store{dir: dir}
		if s.CachedCatalog(key) != nil {
			t.Errorf("case %d: a damaged cache (%d bytes) was used", i, len(data))
			continue
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("case %d: the damaged cache is still there", i)
		}
		if len(s.healed) != 1 || !strings.Contains(s.healed[0], "catalog cache") {
			t.Errorf("case %d: healed = %q, want the catalog cache named", i, s.healed)
		}
	}
}

func TestCachedCatalog(t *testing.T) {
	srcDir := t.TempDir()
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src := source(t, filepath.Join(srcDir, "rich.json"), richCatalog)
	other := source(t, filepath.Join(srcDir, "rich.json"), richCatalog+" ")
	if st.CachedCatalog(src.Key()) != nil {
		t.Fatal("a cache before anything was saved")
	}
	cat := indextest.MustCatalog(t, richCatalog)
	if err := st.SaveCatalog(src.Key(), cat); err != nil {
		t.Fatal(err)
	}
	if got := st.CachedCatalog(src.Key()); got == nil || !bytes.Equal(cacheFile(t, got), cacheFile(t, cat)) { // every field the cache keeps
		t.Fatal("CachedCatalog does not return the saved catalog")
	}
	if st.CachedCatalog(other.Key()) != nil {
		t.Fatal("a cache built from other bytes is returned")
	}
	if len(st.Healed()) != 0 {
		t.Fatalf("a cache of other bytes is reported as damage: %q", st.Healed())
	}
	if err := st.SaveCatalog("nothex", cat); err == nil {
		t.Error("SaveCatalog accepted a key that is not a SHA-256")
	}
	mem, _ := Open("")
	if mem.SaveCatalog(src.Key(), cat) != nil || mem.CachedCatalog(src.Key()) != nil {
		t.Error("an in-memory store caches catalogs")
	}
}

// A kill during SaveCatalog leaves a temporary file: the next open
// removes it (at 100k tools it is 60 MB), but not one written just now,
// which may be another process's write in progress.
func TestOpenStoreRemovesTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, index.CatalogCacheFile+fileio.TmpSuffix+"123")
	if err := os.WriteFile(tmp, []byte("half a cache"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, index.CatalogCacheFile+fileio.TmpSuffix+"456")
	if err := os.WriteFile(fresh, []byte("another process's write"), 0o644); err != nil {
		t.Fatal(err)
	}
	openWithLeftovers(t, dir, tmp)
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("%s is still there after Open", tmp)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a temporary file written just now was removed: %v", err)
	}
}

// TestCatalogDeltaDamage: a damaged delta is removed and said, the
// catalog.bin under it still serves its own key, and a delta over a
// catalog.bin since replaced is never applied.
func TestCatalogDeltaDamage(t *testing.T) {
	srcDir := t.TempDir()
	s := &Store{dir: t.TempDir()}
	doc := richCatalog
	for k := 0; k < 20; k++ { // enough tools for one edit to be a delta
		doc = strings.Replace(doc, `{"name":"alpha","description":"","tools":[`,
			fmt.Sprintf(`{"name":"alpha","description":"","tools":[{"name":"pad%d","description":"Pad.","inputSchema":{"type":"object"}},`, k), 1)
	}
	save := func(doc string) string { return saveCatalogDoc(t, s, filepath.Join(srcDir, "test"), doc) }
	baseKey := save(doc)
	edited := strings.Replace(doc, "List drafts.", "List the drafts.", 1)
	deltaKey := save(edited)
	deltaPath := filepath.Join(s.dir, index.CatalogDeltaFile)
	data, err := os.ReadFile(deltaPath)
	if err != nil {
		t.Fatalf("an edit of one tool in %d was not saved as a delta: %v", strings.Count(doc, `"name"`), err)
	}
	for _, at := range []int{len("TSCATD01") + 40, index.DeltaHeadLen + 2, len(data) - 3} {
		bad := append([]byte(nil), data...)
		bad[at] ^= 0x10
		if err := os.WriteFile(deltaPath, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		s.healed = nil
		if at < index.DeltaHeadLen {
			// The header names another base or key: not this key's cache.
			if s.CachedCatalog(deltaKey) != nil {
				t.Errorf("byte %d: a delta with a damaged header was applied", at)
			}
			continue
		}
		if s.CachedCatalog(deltaKey) != nil {
			t.Errorf("byte %d: a damaged delta was applied", at)
		}
		if _, err := os.Stat(deltaPath); !os.IsNotExist(err) || len(s.healed) != 1 || !strings.Contains(s.healed[0], index.CatalogDeltaFile) {
			t.Errorf("byte %d: the damaged delta is not removed and said: healed %q", at, s.healed)
		}
		if last := s.LastBuild().Catalog(); last == nil || last.ToolByKey("zeta/list-drafts").Description != "List drafts." {
			t.Errorf("byte %d: LastBuild is not catalog.bin's after the delta was found damaged", at)
		}
	}
	if got := s.CachedCatalog(baseKey); got == nil || got.Len() != strings.Count(doc, `"inputSchema"`) {
		t.Fatal("catalog.bin no longer serves its own key")
	}
	// A delta over a catalog.bin that was replaced since is not applied.
	if err := os.WriteFile(deltaPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if s.CachedCatalog(deltaKey) == nil {
		t.Fatal("the delta, restored, is not applied")
	}
	other := indextest.MustCatalog(t, richCatalog)
	if err := s.SaveCatalog(strings.Repeat("cd", 32), other); err != nil { // not from the base: saved whole
		t.Fatal(err)
	}
	if _, err := os.Stat(deltaPath); !os.IsNotExist(err) {
		t.Error("a whole save left the delta over the old catalog.bin")
	}
	if err := os.WriteFile(deltaPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if s.CachedCatalog(deltaKey) != nil {
		t.Error("a delta over another catalog.bin was applied")
	}
	if last := s.LastBuild().Catalog(); last == nil || last.Len() != other.Len() {
		t.Error("LastBuild applied a delta over another catalog.bin")
	}
}

// richCatalog uses every field a cached catalog must keep (see index's
// tests, whose testdata it is).
var richCatalog = func() string {
	data, err := os.ReadFile("../testdata/rich.json")
	if err != nil {
		panic(err)
	}
	return string(data)
}()

// source returns doc, written to the file at path, as a catalog source.
// A file there before is removed first, not rewritten: a source maps
// its files.
func source(t *testing.T, path, doc string) *index.CatalogSource {
	t.Helper()
	os.Remove(path)
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := index.ReadCatalogSource([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// cacheFile returns cat as catalog.bin holds it (under a zero key).
func cacheFile(t *testing.T, cat *index.Catalog) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := index.WriteCatalogCache(&buf, make([]byte, 32), cat); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCatalogFor: (catalogFor) a source whose catalog is cached gets it back, with
// no specs to build; another gets its specs and the previous build to
// reuse, the cached one.
func TestCatalogFor(t *testing.T) {
	srcDir := t.TempDir()
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src := source(t, filepath.Join(srcDir, "rich.json"), richCatalog)
	cat := indextest.MustCatalog(t, richCatalog)
	if err := st.SaveCatalog(src.Key(), cat); err != nil {
		t.Fatal(err)
	}
	cached, specs, last, err := st.catalogFor(src)
	if err != nil || cached == nil || cached.Hash() != cat.Hash() || specs != nil || last != nil {
		t.Fatalf("CatalogFor(the cached source) = %v, %d specs, last %v, %v; want the cached catalog alone", cached, len(specs), last, err)
	}
	edited := source(t, filepath.Join(srcDir, "rich.json"), strings.Replace(richCatalog, "List drafts.", "List the drafts.", 1))
	cached, specs, last, err = st.catalogFor(edited)
	if err != nil || cached != nil || len(specs) != len(cat.Domains()) || last.Catalog() == nil || last.Catalog().Hash() != cat.Hash() {
		t.Fatalf("CatalogFor(an edited source) = %v, %d specs, last %v, %v; want its specs and the cached build", cached, len(specs), last, err)
	}
}

// saveCatalogDoc saves the catalog of the catalog.json text doc, read
// from path, into s's cache the way a build does (taking the last
// build's tools over, so that a small edit is saved as a delta), and
// returns its key.
func saveCatalogDoc(t *testing.T, s *Store, path, doc string) string {
	t.Helper()
	src := source(t, path, doc)
	specs, last, err := src.SpecsFromLast(s.LastBuild)
	if err != nil {
		t.Fatal(err)
	}
	c, err := index.NewCatalogFromLast(specs, last)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCatalog(src.Key(), c); err != nil {
		t.Fatal(err)
	}
	return src.Key()
}

// TestCachedCatalogDropsTheFiles: a store whose catalog files' catalog
// is in its cache lets go of the files' bytes (a server held them
// mapped for its life); the key stays, and Specs says what happened
// instead of reading what is gone. A catalog built from the files lets
// go of them too, once built (TestBuiltCatalogDropsTheFiles).
func TestCachedCatalogDropsTheFiles(t *testing.T) {
	maps := func() string {
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Skip("no /proc/self/maps:", err)
		}
		return string(b)
	}
	path := filepath.Join(t.TempDir(), "rich.json")
	dir := t.TempDir()
	src := source(t, path, richCatalog)
	if !strings.Contains(maps(), path) {
		t.Fatal("catalog files just read are not mapped: the test cannot tell a drop")
	}
	st, err := OpenWith(dir, Options{Catalog: src})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Catalog(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.WaitSaved()
	st.Close()
	if strings.Contains(maps(), path) {
		t.Fatal("the files are still mapped after their catalog was built (TestBuiltCatalogDropsTheFiles)")
	}

	src = source(t, path, richCatalog)
	key := src.Key()
	st, err = OpenWith(dir, Options{Catalog: src})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cat, specs, err := st.CatalogSpecs()
	if err != nil || cat == nil || specs != nil {
		t.Fatalf("CatalogSpecs = %v, %d specs, %v; want the cached catalog", cat, len(specs), err)
	}
	if strings.Contains(maps(), path) {
		t.Error("the catalog files are still mapped after their catalog was read from the cache")
	}
	if src.Key() != key {
		t.Errorf("Key after the drop = %q, want %q", src.Key(), key)
	}
	if _, err := src.Specs(); err == nil || !strings.Contains(err.Error(), "let go") {
		t.Errorf("Specs after the drop: %v, want an error saying the bytes were let go", err)
	}
}
