package keyword

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

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

// TestSearchesTakeCores: a search runs on a core of its own, waiting in
// turn while other searches hold them all (and giving up with its
// context), and runs in parts only on cores nothing else holds.
func TestSearchesTakeCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	kw := synthIndex(t, 600)
	kw.SetPartDocs(100) // up to 4 parts on 4 cores
	ctx := context.Background()
	q := Query{Text: "search files", Fuzzy: 0.2, Divide: true}
	search := func(ctx context.Context) error {
		_, err := kw.Search(ctx, q)
		return err
	}
	cores := kw.searchCores()
	dividedAfter := func(name string, want bool) {
		t.Helper()
		before := kw.divided.Load()
		if err := search(ctx); err != nil {
			t.Fatal(err)
		}
		if got := kw.divided.Load() > before; got != want {
			t.Errorf("%s: divided %v, want %v", name, got, want)
		}
	}
	dividedAfter("alone", true)
	if err := cores.Acquire(ctx, 3); err != nil { // three other searches
		t.Fatal(err)
	}
	dividedAfter("three cores busy", false)
	if err := cores.Acquire(ctx, 1); err != nil { // every core busy
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := search(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("search with every core busy and its context cancelled = %v, want context.Canceled", err)
	}
	done := make(chan error, 1)
	go func() { done <- search(ctx) }()
	cores.Release(1) // a core comes free: the waiting search runs
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cores.Release(3)
	dividedAfter("alone again", true)
	// Every core is given back: all four can be taken at once.
	if !cores.TryAcquire(4) {
		t.Fatal("searches kept cores after they returned")
	}
	cores.Release(4)
}

// TestSearchesGiveCoresBack: whatever their outcome, searches run at
// once give back the cores they took.
func TestSearchesGiveCoresBack(t *testing.T) {
	kw := synthIndex(t, 300)
	kw.SetPartDocs(50)
	// Bounded: searches that kept their cores would fail the test here,
	// not hang it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := "search files"
			if i%4 == 0 {
				text = "zzzz" // matches nothing
			}
			kw.Search(ctx, Query{Text: text, Fuzzy: 0.2, Divide: true})
		}()
	}
	wg.Wait()
	n := int64(runtime.GOMAXPROCS(0))
	if cores := kw.searchCores(); !cores.TryAcquire(n) {
		t.Errorf("after 16 searches, the %d cores cannot be taken at once: some were kept", n)
	}
}

// TestDividePartRaisesTheSplit: a query's DividePart divides only an
// index of at least two parts of that many documents, never below the
// index's own part size, and never an index set not to divide; the
// hits are those of the undivided query.
func TestDividePartRaisesTheSplit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	kw := synthIndex(t, 600)
	ctx := context.Background()
	whole, err := kw.Search(ctx, Query{Text: "search files"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		partDocs, dividePart int
		want                 bool
	}{
		{100, 0, true},    // the index's parts
		{100, 300, true},  // 600 documents: two parts of 300
		{100, 301, false}, // fewer than two parts of 301
		{100, 50, true},   // never below the index's own part size: still divided
		{0, 100, false},   // an index set not to divide
	} {
		kw.SetPartDocs(c.partDocs)
		before := kw.divided.Load()
		got, err := kw.Search(ctx, Query{Text: "search files", Divide: true, DividePart: c.dividePart})
		if err != nil {
			t.Fatal(err)
		}
		if divided := kw.divided.Load() > before; divided != c.want {
			t.Errorf("part docs %d, DividePart %d: divided %v, want %v", c.partDocs, c.dividePart, divided, c.want)
		}
		if fmt.Sprint(got) != fmt.Sprint(whole) {
			t.Errorf("part docs %d, DividePart %d: hits differ from the undivided query's:\n got %v\nwant %v", c.partDocs, c.dividePart, got, whole)
		}
	}
}
