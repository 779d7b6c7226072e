package keyword

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/search"
)

// TestReadOnlyRefusesUnmigratedAtOnce: an index of the earlier format
// "3" (field lengths without a checksum) opened read-only answers at
// once with the command that migrates it (it once waited for good,
// resealing them through a Bleve that persists nothing).
func TestReadOnlyRefusesUnmigratedAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keyword.bleve")
	writeFormat3(t, path)
	done := make(chan error, 1)
	go func() {
		r, err := OpenReadOnly(path)
		if err == nil {
			r.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "toolscout index") {
			t.Errorf("OpenReadOnly of an unmigrated index = %v; want an error naming toolscout index", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OpenReadOnly hangs on an unmigrated index")
	}
}

type failingSearcher struct {
	search.Searcher
	n int
}

func (f *failingSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	if f.n == 0 {
		return nil, errors.New("boom")
	}
	f.n--
	d := ctx.DocumentMatchPool.Get()
	d.IndexInternalID = docNumber(uint64(f.n + 3))
	d.Score = 1
	return d, nil
}

// TestAccumulatorClearedAfterError: a sum whose clause fails mid-drain
// leaves no scores in the pooled accumulator for the next query.
func TestAccumulatorClearedAfterError(t *testing.T) {
	ctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(10, 0)}
	s := &sumSearcher{taat: true, clauses: []search.Searcher{&failingSearcher{n: 2}}}
	if _, err := s.drain(ctx); err == nil {
		t.Fatal("want error")
	}
	// Same goroutine, no GC: the pool hands back the same accumulator.
	s2 := &sumSearcher{taat: true}
	hits, err := s2.drain(ctx)
	if err != nil || len(hits) > 0 {
		t.Errorf("stale hits from the failed query: %v", hits)
	}
}

// docsSearcher yields n documents, then ends.
type docsSearcher struct {
	search.Searcher
	n int
}

func (f *docsSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	if f.n == 0 {
		return nil, nil
	}
	f.n--
	d := ctx.DocumentMatchPool.Get()
	d.IndexInternalID = docNumber(uint64(f.n + 3))
	d.Score = 1
	return d, nil
}

func (f *docsSearcher) Close() error { return nil }

// TestDrainedListsRecycled: the list a sum drains goes back to the pool
// when the sum closes (or, for a nested sum, when its parent has read
// it), so that a query leaves no list behind as garbage: a 100k-tool
// keyword query left 9 MB before (BENCHMARKS.md).
func TestDrainedListsRecycled(t *testing.T) {
	// Under the race detector sync.Pool drops a quarter of what it is
	// given, at random, by design: a closed sum's list may be dropped. So
	// the test closes sums until the pool hands one back, at most 20
	// times (all 40 lists dropped: a chance of 4^-40); without -race the
	// first time does.
	for try := 1; ; try++ {
		ctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(10, 0)}
		inner := &sumSearcher{taat: true, clauses: []search.Searcher{&docsSearcher{n: 50}}}
		s := &sumSearcher{taat: true, clauses: []search.Searcher{inner, &docsSearcher{n: 40}}}
		if err := s.start(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if len(s.hits) != 50 {
			t.Fatalf("drained %d documents, want 50", len(s.hits))
		}
		first := &s.hits[:1][0]
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if s.hits != nil {
			t.Fatal("a closed sum still holds its drained list")
		}
		// Same goroutine, no GC: the pool hands back a list drained before.
		again := getHits()
		if cap(again) > 0 && (&again[:1][0] == first || cap(again) >= 50) {
			return
		}
		if try == 20 {
			t.Fatalf("after 20 sums closed the pool hands a list of capacity %d, not a closed sum's: drained lists are garbage", cap(again))
		}
	}
}
