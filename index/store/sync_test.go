package store

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/indextest"
)

// TestSyncWith: the path the product takes (search.Live) writes the
// keyword index first and says so (KeywordDone) whether the vectors then
// sync or fail; beside the keyword index or after it, the vectors end the
// same; Prune deletes the provider's other collections.
func TestSyncWith(t *testing.T) {
	ctx := context.Background()
	cat := indextest.MustCatalog(t, indextest.SmallCatalog)
	for _, beside := range []bool{false, true} {
		st, err := Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		// An embedder that cannot be prepared: the keyword index is
		// still written, and said to be, and the error comes back.
		keywordDone := 0
		boom := errors.New("embedder not ready")
		_, err = st.SyncWith(ctx, cat, SyncOptions{
			Embedder: &indextest.CountingEmbedder{}, Beside: beside,
			Prepare:     func(context.Context) (vector.Collection, error) { return vector.Collection{}, boom },
			KeywordDone: func() { keywordDone++ },
		})
		if n, _ := st.Keyword.Count(); !errors.Is(err, boom) || keywordDone != 1 || int(n) != cat.Len() {
			t.Errorf("beside=%v, Prepare failing: err %v, KeywordDone called %d times, %d of %d tools in the keyword index", beside, err, keywordDone, n, cat.Len())
		}
		// An older collection of the same provider, then a sync that prunes it.
		old := vector.Collection{Provider: testCol.Provider, Model: "older", Dims: testCol.Dims}
		if _, err := st.Sync(ctx, cat, &indextest.CountingEmbedder{}, old, vector.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		stats, err := st.SyncWith(ctx, cat, SyncOptions{
			Embedder: &indextest.CountingEmbedder{}, Beside: beside, Prune: true,
			Prepare: func(context.Context) (vector.Collection, error) { return testCol, nil },
		})
		if err != nil || stats.Vectors.Added != cat.Len() || st.Vectors.Count(testCol) != cat.Len() {
			t.Errorf("beside=%v: %v, %+v, %d vectors", beside, err, stats.Vectors, st.Vectors.Count(testCol))
		}
		if !slices.Equal(stats.Pruned, []string{old.Name()}) || stats.PruneErr != nil || st.Vectors.Count(old) != 0 {
			t.Errorf("beside=%v: pruned %v (%v), %d vectors left in %s", beside, stats.Pruned, stats.PruneErr, st.Vectors.Count(old), old.Name())
		}
	}
}
