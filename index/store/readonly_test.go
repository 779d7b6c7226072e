package store

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword"
	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/indextest"
	"github.com/toolscout/toolscout/internal/treestate"
)

// treeOf records what dir holds.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	st, err := treestate.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// sameTree fails the test for each file created, removed or changed.
func sameTree(t *testing.T, before, after map[string]string) {
	t.Helper()
	for _, d := range treestate.Diff(before, after) {
		t.Error(d)
	}
}

func openReadOnly(t *testing.T, dir string) *Store {
	t.Helper()
	st, err := OpenWith(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestReadOnlyStore: two stores open a data dir that a sync built, at
// once and read-only: both search it (keyword and vectors) without
// embedding anything, a writer cannot take the keyword index meanwhile,
// whatever would write fails with ErrReadOnly, and not a file of the
// data dir is created, changed or removed.
func TestReadOnlyStore(t *testing.T) {
	dir := syncedStore(t)
	before := treeOf(t, dir)
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	ctx := context.Background()
	a, b := openReadOnly(t, dir), openReadOnly(t, dir)
	for i, st := range []*Store{a, b} {
		emb := &indextest.CountingEmbedder{}
		stats, err := st.Sync(ctx, cat, emb, testCol, vector.SyncOptions{})
		if err != nil || stats.Keyword.Unchanged != 6 || stats.Vectors.Unchanged != 6 || emb.Texts != 0 {
			t.Errorf("store %d: Sync to the catalog it holds = %+v (%d texts embedded), %v; want all unchanged", i, stats, emb.Texts, err)
		}
		hits, err := st.Keyword.Search(ctx, keyword.Query{Text: "post message"})
		if err != nil || len(hits) == 0 || hits[0].ID != "slack__post_message" {
			t.Errorf("store %d: keyword search = %v, %v", i, hits, err)
		}
		vhits, err := st.Vectors.Query(ctx, testCol, indextest.HashVec(index.DocumentText(cat.Tool("slack__post_message"))), 1, "", "")
		if err != nil || len(vhits) != 1 || vhits[0].ID != "slack__post_message" {
			t.Errorf("store %d: vector query = %v, %v", i, vhits, err)
		}
	}
	if w, err := keyword.Open(filepath.Join(dir, "keyword.bleve")); !errors.Is(err, keyword.ErrLocked) {
		if w != nil {
			w.Close()
		}
		t.Errorf("a writer's keyword.Open beside two readers = %v, want ErrLocked", err)
	}
	other := indextest.MustCatalog(t, strings.Replace(indextest.SmallCatalog, "Send a message to a channel.", "Post a message in a channel.", 1))
	if other.Hash() == cat.Hash() {
		t.Fatal("the other catalog is the same")
	}
	emb := &indextest.CountingEmbedder{}
	if _, err := a.Sync(ctx, other, emb, testCol, vector.SyncOptions{}); !errors.Is(err, index.ErrReadOnly) {
		t.Errorf("Sync to another catalog = %v, want ErrReadOnly", err)
	}
	if _, err := a.Vectors.Sync(ctx, testCol, other, emb, vector.SyncOptions{}); !errors.Is(err, index.ErrReadOnly) || emb.Texts != 0 {
		t.Errorf("vector Sync to another catalog = %v (%d texts embedded), want ErrReadOnly and nothing embedded", err, emb.Texts)
	}
	if err := a.SaveCatalog(strings.Repeat("ab", 32), cat); !errors.Is(err, index.ErrReadOnly) {
		t.Errorf("SaveCatalog = %v, want ErrReadOnly", err)
	}
	if err := a.SaveFit("fp", cat, func(io.Writer) error { return nil }); !errors.Is(err, index.ErrReadOnly) {
		t.Errorf("SaveFit = %v, want ErrReadOnly", err)
	}
	if gone, err := a.Vectors.Prune(testCol.Provider, vector.Collection{Provider: testCol.Provider, Model: "other", Dims: testCol.Dims}); err != nil || len(gone) != 0 {
		t.Errorf("Prune = %v, %v; want nothing deleted", gone, err)
	}
	a.Close()
	b.Close()
	sameTree(t, before, treeOf(t, dir))
}

// TestReadOnlyStoreRefuses: read-only, a data dir without an index is
// ErrNoIndex and stays as it was (here: missing); a damaged collection
// file is not healed: the sync that needs it says why it cannot, and the
// file stays.
func TestReadOnlyStoreRefuses(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	if st, err := OpenWith(missing, Options{ReadOnly: true}); !errors.Is(err, index.ErrNoIndex) {
		if st != nil {
			st.Close()
		}
		t.Errorf("OpenWith(missing dir, read-only) = %v, want ErrNoIndex", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing data dir was created: %v", err)
	}

	dir := syncedStore(t)
	files, _ := filepath.Glob(filepath.Join(dir, "vectors", "*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		os.WriteFile(f, data[:len(data)/2], 0o644)
	}
	before := treeOf(t, dir)
	st := openReadOnly(t, dir)
	emb := &indextest.CountingEmbedder{}
	_, err := st.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog), emb, testCol, vector.SyncOptions{})
	if !errors.Is(err, index.ErrReadOnly) || !strings.Contains(err.Error(), "could not be read") || emb.Texts != 0 {
		t.Errorf("Sync over a cut collection file = %v (%d texts embedded), want ErrReadOnly saying it could not be read", err, emb.Texts)
	}
	if h := st.Healed(); len(h) != 0 {
		t.Errorf("Healed = %q, want nothing healed read-only", h)
	}
	st.Close()
	sameTree(t, before, treeOf(t, dir))
}
