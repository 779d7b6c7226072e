package vector

import (
	"context"
	"reflect"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/indextest"
)

// TestDomainSimilarityInto: the similarities are DomainSimilarity's,
// written into the map given (emptied first: a name left from an earlier
// search is gone), and a search that reuses its map allocates no map of
// the domains (only the request's normalised vector).
func TestDomainSimilarityInto(t *testing.T) {
	ctx := context.Background()
	vs, cat := syncedSmall(t)
	q := indextest.HashVec(index.DocumentText(cat.Tool("slack__post_message")))
	want, err := vs.DomainSimilarity(ctx, testCol, q)
	if err != nil {
		t.Fatal(err)
	}
	dst := map[string]float32{"stale": 9}
	got, err := vs.DomainSimilarityInto(ctx, testCol, q, dst)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(dst).UnsafePointer() {
		t.Error("DomainSimilarityInto returned another map than the one it was given")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DomainSimilarityInto = %v, want %v (DomainSimilarity's, without the stale entry)", got, want)
	}
	fresh := testing.AllocsPerRun(50, func() { vs.DomainSimilarity(ctx, testCol, q) })
	reused := testing.AllocsPerRun(50, func() { vs.DomainSimilarityInto(ctx, testCol, q, dst) })
	if reused >= fresh || reused > 2 {
		t.Errorf("DomainSimilarityInto with a reused map: %v allocations a search, DomainSimilarity %v; want at most 2 (the normalised request, the collection's name) and fewer", reused, fresh)
	}
	if _, err := vs.DomainSimilarityInto(ctx, testCol, make([]float32, 3), dst); err == nil {
		t.Error("DomainSimilarityInto with a 3-dimensional vector succeeded on a 16-dimensional collection")
	}
}
