package store

import (
	"bytes"
	"context"
	"errors"
	"github.com/toolscout/toolscout/index/keyword"
	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/fileio"
	"github.com/toolscout/toolscout/internal/indextest"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openWithLeftovers dates the files at paths, temporary files a kill left
// behind, past leftoverAge and opens the store in dir (closed when the
// test ends).
func openWithLeftovers(t *testing.T, dir string, paths ...string) *Store {
	t.Helper()
	old := time.Now().Add(-2 * fileio.LeftoverAge)
	for _, p := range paths {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// syncedStore writes both indexes of smallCatalog under a fresh data dir
// and closes them, as a finished `toolscout index` leaves them.
func syncedStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog), &indextest.CountingEmbedder{}, testCol, vector.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	return dir
}

func TestOpenStoreHealsAGarbageSegment(t *testing.T) {
	dir := syncedStore(t)
	segs, _ := filepath.Glob(filepath.Join(dir, "keyword.bleve", "store", "*.zap"))
	if len(segs) == 0 {
		t.Fatal("no .zap segment written")
	}
	rng := rand.New(rand.NewSource(1))
	for _, seg := range segs {
		info, _ := os.Stat(seg)
		junk := make([]byte, info.Size())
		rng.Read(junk)
		os.WriteFile(seg, junk, 0o644)
	}
	st, err := Open(dir) // panicked inside zapx before
	if err != nil {
		t.Fatalf("Open on a garbage segment: %v", err)
	}
	defer st.Close()
	if h := st.Healed(); len(h) != 1 || !strings.Contains(h[0], "keyword index") {
		t.Errorf("Healed = %q, want one line about the keyword index", h)
	}
	stats, err := st.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog), &indextest.CountingEmbedder{}, testCol, vector.SyncOptions{})
	if err != nil || stats.Keyword.Added != 6 || stats.Vectors.Unchanged != 6 {
		t.Fatalf("sync after healing = %+v, %v; want the keyword index rebuilt and the vectors kept", stats, err)
	}
	hits, err := st.Keyword.Search(context.Background(), keyword.Query{Text: "post message"})
	if err != nil || len(hits) == 0 || hits[0].ID != "slack__post_message" {
		t.Errorf("search after healing = %v, %v", hits, err)
	}
}

func TestOpenStoreHealsACutCollectionFile(t *testing.T) {
	for _, cut := range []string{"empty", "half"} {
		t.Run(cut, func(t *testing.T) {
			dir := syncedStore(t)
			files, _ := filepath.Glob(filepath.Join(dir, "vectors", "*.snap"))
			if len(files) != 1 {
				t.Fatalf("vector files = %v, want one file for the one collection", files)
			}
			data, _ := os.ReadFile(files[0])
			if cut == "empty" {
				data = nil
			} else {
				data = data[:len(data)/2]
			}
			os.WriteFile(files[0], data, 0o644)
			st, err := Open(dir)
			if err != nil {
				t.Fatalf("Open with a %s collection file: %v", cut, err)
			}
			defer st.Close()
			emb := &indextest.CountingEmbedder{}
			stats, err := st.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog), emb, testCol, vector.SyncOptions{})
			if err != nil || stats.Vectors.Added != 6 || emb.Texts != 6 {
				t.Errorf("sync after healing = %+v (%d texts embedded), %v; want the collection embedded again", stats.Vectors, emb.Texts, err)
			}
			if h := st.Healed(); len(h) != 1 || !strings.Contains(h[0], "could not be read") {
				t.Errorf("Healed = %q, want one line naming the collection file", h)
			}
		})
	}
}

// TestKillMidWriteKeepsThePreviousFile: a kill while a collection file is
// written leaves a temporary file; the previous version is whole.
func TestKillMidWriteKeepsThePreviousFile(t *testing.T) {
	dir := syncedStore(t)
	files, _ := filepath.Glob(filepath.Join(dir, "vectors", "*.snap"))
	tmp := files[0] + fileio.TmpSuffix + "123"
	os.WriteFile(tmp, []byte("half a collection"), 0o644)
	st := openWithLeftovers(t, dir, tmp)
	emb := &indextest.CountingEmbedder{}
	stats, err := st.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog), emb, testCol, vector.SyncOptions{})
	if err != nil || stats.Vectors.Unchanged != 6 || emb.Texts != 0 || len(st.Healed()) != 0 {
		t.Errorf("sync = %+v (%d embedded, healed %q), %v; want the previous file used as is", stats.Vectors, emb.Texts, st.Healed(), err)
	}
	if _, err := os.Stat(tmp); err == nil {
		t.Error("the leftover temporary file is still there")
	}
}

func TestStoreSharedDataDir(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.MemoryKeyword {
		t.Fatal("the first store did not get the on-disk keyword index")
	}
	if _, err := keyword.Open(filepath.Join(dir, "keyword.bleve")); !errors.Is(err, keyword.ErrLocked) {
		t.Fatalf("second keyword.Open error = %v, want ErrLocked", err)
	}
	b, err := Open(dir)
	if err != nil {
		t.Fatalf("second Open on a data dir in use: %v", err)
	}
	defer b.Close()
	if !b.MemoryKeyword {
		t.Error("the second store should keep its keyword index in memory")
	}
	if _, err := b.Keyword.Sync(context.Background(), indextest.MustCatalog(t, indextest.SmallCatalog)); err != nil {
		t.Fatal(err)
	}
	if hits, _ := b.Keyword.Search(context.Background(), keyword.Query{Text: "message"}); len(hits) == 0 {
		t.Error("the in-memory keyword index finds nothing")
	}
}

// testCol is the collection of indextest.CountingEmbedder's vectors.
var testCol = vector.Collection{Provider: "test", Model: "hash16", Dims: 16}

// TestExclusiveOpenRefusesAHeldKeywordIndex: the process that builds the
// indexes for others (Options.Exclusive) is refused a keyword index
// another process holds, with the way out; any other process keeps its
// own in memory, with a warning.
func TestExclusiveOpenRefusesAHeldKeywordIndex(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = OpenWith(dir, Options{Exclusive: true})
	if !errors.Is(err, keyword.ErrLocked) || !strings.Contains(err.Error(), "in use by another toolscout process") || !strings.Contains(err.Error(), "nothing was indexed") {
		t.Errorf("exclusive open of a held data dir: %v; want ErrLocked saying what to do", err)
	}
	var logs bytes.Buffer
	b, err := OpenWith(dir, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !b.MemoryKeyword || !strings.Contains(logs.String(), "keeps its keyword index in memory") {
		t.Errorf("shared open: MemoryKeyword %v, logs %q; want the index in memory, said", b.MemoryKeyword, logs.String())
	}
}
