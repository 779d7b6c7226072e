package keyword

import (
	"context"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/toolscout/toolscout/internal/indextest"
)

// TestDividedQueryOnAnotherSnapshot: parts that find the index changed
// since the bounds were taken give no answer, so that the caller runs the
// query whole, instead of an answer that may miss documents.
func TestDividedQueryOnAnotherSnapshot(t *testing.T) {
	kw, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	if _, err := kw.Sync(context.Background(), indextest.DeltaCatalog(t, nil, nil)); err != nil {
		t.Fatal(err)
	}
	top, _, err := buildQuery(Query{Text: "alpha bravo"})
	if err != nil {
		t.Fatal(err)
	}
	request := func(q query.Query) *bleve.SearchRequest { return bleve.NewSearchRequestOptions(q, 10, 0, false) }
	r := indexReader(t, kw)
	defer r.Close()
	hits, err := kw.dividedHits(context.Background(), top, 10, request, &snapshotPin{want: r}, 2)
	if err != nil || len(hits) == 0 {
		t.Fatalf("on the pinned snapshot: %d hits, %v", len(hits), err)
	}
	stale := &snapshotPin{}
	hits, err = kw.dividedHits(context.Background(), top, 10, request, stale, 2)
	if err != nil || hits != nil || !stale.moved.Load() {
		t.Fatalf("on another snapshot: %d hits (nil: %v), err %v, moved %v; want nil hits and moved", len(hits), hits == nil, err, stale.moved.Load())
	}
}
