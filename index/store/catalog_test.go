package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/indextest"
)

// TestStoreCatalog: a store opened with catalog files gives their
// catalog: built and saved the first time, read back from the cache the
// next (the very tools, none built), rebuilt from the previous build
// after an edit (its unchanged tools taken over), and, read-only, only
// what the cache holds (else ErrNoIndex, and nothing written).
func TestStoreCatalog(t *testing.T) {
	ctx := context.Background()
	dir, srcDir := t.TempDir(), t.TempDir()
	path := filepath.Join(srcDir, "rich.json")
	open := func(src *index.CatalogSource, readOnly bool) *Store {
		t.Helper()
		st, err := OpenWith(dir, Options{Catalog: src, ReadOnly: readOnly})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	want := indextest.MustCatalog(t, richCatalog)

	// The first start builds the catalog and saves it.
	st := open(source(t, path, richCatalog), false)
	if cat, specs, err := st.CatalogSpecs(); err != nil || cat != nil || len(specs) != len(want.Domains()) {
		t.Fatalf("CatalogSpecs() before a build = %v, %d specs, %v; want the files' %d domains", cat, len(specs), err, len(want.Domains()))
	}
	first, err := st.Catalog(ctx)
	if err != nil || first == nil || first.Hash() != want.Hash() {
		t.Fatalf("Catalog() = %v, %v; want the catalog of the files", first, err)
	}
	if again, _ := st.Catalog(ctx); again != first {
		t.Error("a second Catalog() built the catalog again")
	}
	if err := st.Close(); err != nil { // waits for the save
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, index.CatalogCacheFile)); err != nil {
		t.Fatalf("the built catalog was not saved: %v", err)
	}

	// The next start with the same files reads it back.
	st = open(source(t, path, richCatalog), false)
	cat, specs, err := st.CatalogSpecs()
	if err != nil || cat == nil || specs != nil || cat.Hash() != want.Hash() {
		t.Fatalf("CatalogSpecs() of cached files = %v, %d specs, %v; want the cached catalog alone", cat, len(specs), err)
	}
	if got, err := st.Catalog(ctx); got != cat || err != nil {
		t.Fatalf("Catalog() of cached files = %v, %v; want the catalog CatalogSpecs gave", got, err)
	}
	st.Close()

	// After an edit, the catalog is built again from the previous one.
	editedDoc := strings.Replace(richCatalog, "List drafts.", "List the drafts.", 1)
	st = open(source(t, path, editedDoc), false)
	edited, err := st.Catalog(ctx)
	if err != nil || edited.Hash() != indextest.MustCatalog(t, editedDoc).Hash() {
		t.Fatalf("Catalog() after an edit = %v, %v; want the edited files' catalog", edited, err)
	}
	// Changes counts the tools not taken over from the previous build
	// (and those of it not taken): one, if the others were.
	if n, ok := edited.Changes(); !ok || n != 1 {
		t.Errorf("Changes() after an edit of one tool = %d, %v; want 1 since the previous build", n, ok)
	}
	st.Close()

	// Read-only: the cache or nothing.
	before := treeOf(t, dir)
	st = open(source(t, path, editedDoc), true)
	if cat, err := st.Catalog(ctx); err != nil || cat == nil || cat.Hash() != edited.Hash() {
		t.Errorf("read-only Catalog() of cached files = %v, %v; want the cached catalog", cat, err)
	}
	st.Close()
	st = open(source(t, path, strings.Replace(richCatalog, "List drafts.", "List all drafts.", 1)), true)
	if cat, specs, err := st.CatalogSpecs(); !errors.Is(err, index.ErrNoIndex) || cat != nil || specs != nil {
		t.Errorf("read-only CatalogSpecs() of files not cached = %v, %d specs, %v; want ErrNoIndex", cat, len(specs), err)
	}
	if cat, err := st.Catalog(ctx); !errors.Is(err, index.ErrNoIndex) || cat != nil {
		t.Errorf("read-only Catalog() of files not cached = %v, %v; want ErrNoIndex", cat, err)
	}
	st.Close()
	sameTree(t, before, treeOf(t, dir))

	// No catalog files: no catalog.
	st = open(nil, false)
	defer st.Close()
	if cat, err := st.Catalog(ctx); cat != nil || err != nil {
		t.Errorf("Catalog() without catalog files = %v, %v; want nothing", cat, err)
	}
}

// TestInspectCatalog: InspectCatalog builds the catalog of the files as
// they are now, writing nothing beside them; none is an empty catalog;
// a file that does not check is an error naming the file.
func TestInspectCatalog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rich.json")
	cat, err := InspectCatalog(source(t, path, richCatalog))
	if want := indextest.MustCatalog(t, richCatalog); err != nil || cat == nil || cat.Hash() != want.Hash() {
		t.Fatalf("InspectCatalog(rich.json) = %v, %v; want the catalog of the file", cat, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("InspectCatalog wrote beside the file: %d entries in its folder", len(entries))
	}
	if cat, err := InspectCatalog(nil); err != nil || cat == nil || cat.Len() != 0 {
		t.Errorf("InspectCatalog(nil) = %v, %v; want an empty catalog", cat, err)
	}
	bad := `{"domains": [{"name": "x", "tools": [{"name": "a", "inputSchema": {"type": "string"}}]}]}`
	if _, err := InspectCatalog(source(t, path, bad)); err == nil || !strings.Contains(err.Error(), "rich.json") {
		t.Errorf("InspectCatalog(a schema that is not an object's) = %v, want an error naming the file", err)
	}
}

// TestBuiltCatalogDropsTheFiles: once the store has built the catalog of
// its files, it lets go of their bytes (mapped, all read: at 1M tools
// 400 MB resident until the index ends, before); the catalog and its
// save do not need them.
func TestBuiltCatalogDropsTheFiles(t *testing.T) {
	ctx := context.Background()
	dir, path := t.TempDir(), filepath.Join(t.TempDir(), "rich.json")
	src := source(t, path, richCatalog)
	key := src.Key()
	st, err := OpenWith(dir, Options{Catalog: src})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := st.Catalog(ctx)
	if err != nil || cat.Hash() != indextest.MustCatalog(t, richCatalog).Hash() {
		t.Fatalf("Catalog() = %v, %v; want the catalog of the files", cat, err)
	}
	if _, err := src.Specs(); err == nil {
		t.Error("the files' bytes are still held after their catalog was built")
	}
	if err := st.Close(); err != nil { // waits for the save
		t.Fatal(err)
	}
	// Saved under the files' key: the next start reads it back.
	st, err = OpenWith(dir, Options{Catalog: source(t, path, richCatalog)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if again, _, err := st.CatalogSpecs(); err != nil || again == nil || again.Hash() != cat.Hash() {
		t.Fatalf("CatalogSpecs() after the save = %v, %v; want the saved catalog (key %s)", again, err, key)
	}
}
