package keyword

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/search"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// A keyword query of a long request has a hundred term clauses or more,
// and merging them document at a time through a heap cost more than
// reading their postings (BENCHMARKS.md, "Keyword queries term at a
// time"). So, unless an explanation or the coordination factor is asked
// for, a sum reads its clauses one after the other into a dense array of
// scores indexed by document number (term at a time), then hands the
// documents out in order. Each document's score is added up in clause
// order, as the heap does, so scores are the same to the last bit.

// taatHit is one summed document.
type taatHit struct {
	doc   uint64
	score float64
}

// partRangeKey carries, in a searcher's context, the range [lo, hi) of
// document numbers of a query run in parts (split.go): a sum read term at
// a time reads only its part of each clause.
type partRangeKey struct{}

type partRange struct{ lo, hi uint64 }

// accumulator is a dense array of scores by document number, reused
// between queries.
type accumulator struct {
	score  []float64
	seen   []bool
	lo, hi uint64 // touched documents lie in [lo, hi]
	any    bool
	n      int // touched documents
}

var accumulators = sync.Pool{New: func() any { return &accumulator{} }}

func (a *accumulator) add(doc uint64, s float64) {
	if doc >= uint64(len(a.score)) {
		n := max(doc+1, 2*uint64(len(a.score)))
		a.score = slices.Grow(a.score, int(n)-len(a.score))[:n]
		a.seen = slices.Grow(a.seen, int(n)-len(a.seen))[:n]
	}
	if !a.seen[doc] {
		a.seen[doc] = true
		a.n++
		if !a.any || doc < a.lo {
			a.lo = doc
		}
		if !a.any || doc > a.hi {
			a.hi = doc
		}
		a.any = true
	}
	a.score[doc] += s
}

// collect returns the touched documents in order with their scores, and
// clears the array for its next use.
func (a *accumulator) collect(out []taatHit) []taatHit {
	if !a.any {
		return out
	}
	out = slices.Grow(out, a.n)
	for d := a.lo; d <= a.hi; d++ {
		if a.seen[d] {
			out = append(out, taatHit{d, a.score[d]})
			a.seen[d], a.score[d] = false, 0
		}
	}
	a.any, a.n = false, 0
	return out
}

// hitBuffers recycles the drained lists of sums: a long request's query
// drains a sum per field and term group, and each list was garbage as
// soon as the query ended (BENCHMARKS.md "Keyword query garbage").
var hitBuffers = sync.Pool{New: func() any { return new([]taatHit) }}

// getHits returns an empty list from the pool.
func getHits() []taatHit {
	p := hitBuffers.Get().(*[]taatHit)
	return (*p)[:0]
}

// putHits gives a list back to the pool; the caller no longer reads it.
func putHits(h []taatHit) {
	if cap(h) == 0 {
		return
	}
	h = h[:0]
	hitBuffers.Put(&h)
}

// drain reads every clause of s, term at a time, into hits in document
// order.
func (s *sumSearcher) drain(ctx *search.SearchContext) ([]taatHit, error) {
	acc := accumulators.Get().(*accumulator)
	defer func() {
		acc.collect(nil) // an error leaves scores behind: cleared for the next query
		accumulators.Put(acc)
	}()
	for _, c := range s.clauses {
		if cs, ok := c.(*sumSearcher); ok && cs.taat {
			hits, err := cs.drain(ctx)
			if err != nil {
				return nil, err
			}
			for _, h := range hits {
				acc.add(h.doc, h.score)
			}
			putHits(hits)
			continue
		}
		var d *search.DocumentMatch
		var err error
		if s.part.lo > 0 {
			d, err = c.Advance(ctx, docNumber(s.part.lo))
		} else {
			d, err = c.Next(ctx)
		}
		for ; err == nil && d != nil; d, err = c.Next(ctx) {
			if len(d.IndexInternalID) != 8 {
				ctx.DocumentMatchPool.Put(d)
				return nil, errNotScorch
			}
			n := binary.BigEndian.Uint64(d.IndexInternalID)
			if s.part.hi > 0 && n >= s.part.hi {
				ctx.DocumentMatchPool.Put(d)
				break
			}
			acc.add(n, d.Score)
			ctx.DocumentMatchPool.Put(d)
		}
		if err != nil {
			return nil, err
		}
	}
	return acc.collect(getHits()), nil
}

// nextHit hands out the drained documents in order.
func (s *sumSearcher) nextHit(ctx *search.SearchContext) *search.DocumentMatch {
	if s.pos >= len(s.hits) {
		return nil
	}
	h := s.hits[s.pos]
	s.pos++
	d := ctx.DocumentMatchPool.Get()
	d.IndexInternalID = binary.BigEndian.AppendUint64(d.IndexInternalID[:0], h.doc)
	d.Score = h.score
	return d
}

// seek moves to the first drained document at or after id.
func (s *sumSearcher) seek(id bleveindex.IndexInternalID) {
	if len(id) != 8 {
		return
	}
	n := binary.BigEndian.Uint64(id)
	s.pos, _ = slices.BinarySearchFunc(s.hits, n, func(h taatHit, n uint64) int {
		switch {
		case h.doc < n:
			return -1
		case h.doc > n:
			return 1
		}
		return 0
	})
}

// errNotScorch reports a document number of another length than
// scorch's eight bytes, which a sum read term at a time cannot index by.
var errNotScorch = errors.New("keyword query: a document number is not scorch's 8 bytes")

// withPart returns ctx carrying the range of a part.
func withPart(ctx context.Context, lo, hi uint64) context.Context {
	return context.WithValue(ctx, partRangeKey{}, partRange{lo, hi})
}
