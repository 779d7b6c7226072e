package index

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// syncedStore writes both indexes of smallCatalog under a fresh data dir
// and closes them, as a finished `toolscout index` leaves them.
func syncedStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Sync(context.Background(), mustCatalog(t, smallCatalog), &countingEmbedder{}, testCol, VectorSyncOptions{}); err != nil {
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
	st, err := OpenStore(dir) // panicked inside zapx before
	if err != nil {
		t.Fatalf("OpenStore on a garbage segment: %v", err)
	}
	defer st.Close()
	if len(st.Healed) != 1 || !strings.Contains(st.Healed[0], "keyword index") {
		t.Errorf("Healed = %q, want one line about the keyword index", st.Healed)
	}
	stats, err := st.Sync(context.Background(), mustCatalog(t, smallCatalog), &countingEmbedder{}, testCol, VectorSyncOptions{})
	if err != nil || stats.Keyword.Added != 6 || stats.Vectors.Unchanged != 6 {
		t.Fatalf("sync after healing = %+v, %v; want the keyword index rebuilt and the vectors kept", stats, err)
	}
	hits, err := st.Keyword.Search(context.Background(), KeywordQuery{Text: "post message"})
	if err != nil || len(hits) == 0 || hits[0].ID != "slack__post_message" {
		t.Errorf("search after healing = %v, %v", hits, err)
	}
}

func TestOpenStoreHealsEmptyAndCutVectorFiles(t *testing.T) {
	dir := syncedStore(t)
	docs, _ := filepath.Glob(filepath.Join(dir, "vectors", "*", "*.gob"))
	var damaged []string
	for _, d := range docs {
		if filepath.Base(d) == chromemMetaFile {
			continue
		}
		damaged = append(damaged, d)
		if len(damaged) == 2 {
			break
		}
	}
	os.WriteFile(damaged[0], nil, 0o644) // a kill right after create
	data, _ := os.ReadFile(damaged[1])
	os.WriteFile(damaged[1], data[:len(data)/2], 0o644) // a kill mid-write
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatalf("OpenStore with an empty and a cut vector file: %v", err)
	}
	defer st.Close()
	if len(st.Healed) != 1 || !strings.Contains(st.Healed[0], "removed 2 damaged files") {
		t.Errorf("Healed = %q, want the two files named", st.Healed)
	}
	emb := &countingEmbedder{}
	stats, err := st.Sync(context.Background(), mustCatalog(t, smallCatalog), emb, testCol, VectorSyncOptions{})
	if err != nil || stats.Vectors.Added != 2 || stats.Vectors.Unchanged != 4 || emb.texts != 2 {
		t.Errorf("sync after healing = %+v (%d texts embedded), %v; want exactly the 2 lost tools embedded again", stats.Vectors, emb.texts, err)
	}
}

func TestOpenStoreStartsOverWithoutCollectionMetadata(t *testing.T) {
	dir := syncedStore(t)
	metas, _ := filepath.Glob(filepath.Join(dir, "vectors", "*", chromemMetaFile))
	os.WriteFile(metas[0], []byte("garbage"), 0o644)
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	emb := &countingEmbedder{}
	stats, err := st.Sync(context.Background(), mustCatalog(t, smallCatalog), emb, testCol, VectorSyncOptions{})
	if err != nil || stats.Vectors.Added != 6 || len(st.Healed) != 1 {
		t.Errorf("sync after a broken collection = %+v, healed %q, %v; want the collection rebuilt", stats.Vectors, st.Healed, err)
	}
}
