package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/fileio"
	"github.com/toolscout/toolscout/internal/indextest"
)

// TestStreamedFirstBuild: with Options.Stream, a first build streams
// the files into catalog.bin (written when Catalog returns, not after)
// and gives the catalog read back from it: the catalog a build without
// it gives, in the same catalog.bin. The next start reads it from the
// cache. Bad input is the build's error, and leaves neither catalog.bin
// nor a scratch file; files the streamed build does not read are built
// the usual way.
func TestStreamedFirstBuild(t *testing.T) {
	ctx := context.Background()
	srcDir := t.TempDir()
	path := filepath.Join(srcDir, "rich.json")
	want := indextest.MustCatalog(t, richCatalog)
	open := func(dir, doc string, stream bool) *Store {
		t.Helper()
		st, err := OpenWith(dir, Options{Catalog: source(t, path, doc), Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	noScratch := func(dir string) {
		t.Helper()
		if tmps, _ := filepath.Glob(filepath.Join(dir, "*"+fileio.TmpSuffix+"*")); len(tmps) > 0 {
			t.Errorf("files left in the data dir: %v", tmps)
		}
	}

	// Built without streaming: the catalog.bin to match.
	plain := t.TempDir()
	st := open(plain, richCatalog, false)
	if _, err := st.Catalog(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	wantFile, err := os.ReadFile(filepath.Join(plain, index.CatalogCacheFile))
	if err != nil {
		t.Fatal(err)
	}

	streamed := t.TempDir()
	st = open(streamed, richCatalog, true)
	if cat, specs, err := st.CatalogSpecs(); cat != nil || specs != nil || err != nil {
		t.Errorf("CatalogSpecs() before a streamed build = %v, %d specs, %v; want nothing: the files are read once, by Catalog", cat, len(specs), err)
	}
	cat, err := st.Catalog(ctx)
	if err != nil || cat == nil || cat.Hash() != want.Hash() || cat.Len() != want.Len() {
		t.Fatalf("Catalog() streamed = %v, %v; want the catalog of the files", cat, err)
	}
	got, err := os.ReadFile(filepath.Join(streamed, index.CatalogCacheFile))
	if err != nil {
		t.Fatalf("catalog.bin not there when Catalog returned: %v", err)
	}
	if !bytes.Equal(got, wantFile) {
		t.Errorf("streamed catalog.bin (%d bytes) differs from the one built without streaming (%d bytes)", len(got), len(wantFile))
	}
	for _, tl := range want.Tools() {
		g := cat.Tool(tl.QualifiedName)
		if g == nil || g.Hash != tl.Hash || !bytes.Equal(g.InputSchema(), tl.InputSchema()) || len(g.Params()) != len(tl.Params()) {
			t.Errorf("streamed catalog's %s = %+v; want %+v", tl.QualifiedName, g, tl)
		}
	}
	st.Close()
	noScratch(streamed)

	// The next start finds it cached.
	st = open(streamed, richCatalog, true)
	if c, specs, err := st.CatalogSpecs(); err != nil || c == nil || specs != nil || c.Hash() != want.Hash() {
		t.Errorf("CatalogSpecs() after a streamed build = %v, %d specs, %v; want the cached catalog", c, len(specs), err)
	}
	st.Close()

	// Bad input: the error, nothing written.
	bad := t.TempDir()
	st = open(bad, strings.Replace(richCatalog, `"type":"object"`, `"type":"array"`, 1), true)
	var ce *index.CatalogError
	if _, err := st.Catalog(ctx); !errors.As(err, &ce) || !strings.Contains(ce.Path, "inputSchema") {
		t.Errorf("Catalog() of a tool with an array schema = %v; want a *CatalogError at its inputSchema", err)
	}
	st.Close()
	if _, err := os.Stat(filepath.Join(bad, index.CatalogCacheFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed streamed build left catalog.bin (%v)", err)
	}
	noScratch(bad)

	// A document the streamed build does not read: built as usual.
	other := t.TempDir()
	doc := strings.Replace(richCatalog, "{", `{"$comment": "a key a streamed build does not read",`, 1)
	st = open(other, doc, true)
	if c, err := st.Catalog(ctx); err != nil || c.Hash() != want.Hash() {
		t.Errorf("Catalog() of a file with another top-level key = %v, %v; want the catalog of the files", c, err)
	}
	st.Close()
	if _, err := os.Stat(filepath.Join(other, index.CatalogCacheFile)); err != nil {
		t.Errorf("the catalog built the usual way was not saved: %v", err)
	}
	noScratch(other)
}
