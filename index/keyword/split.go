package keyword

import (
	"context"
	"encoding/binary"
	"math"
	"runtime"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// A keyword query over a large index runs as several searches at once, each
// over one contiguous range of the index's internal document numbers, the
// way Lucene searches slices of an index's segments concurrently. Each part
// scores with the whole index's statistics (it is the same index, only the
// documents it visits are fewer), so a document's score is the one an
// undivided search gives it, and the best hits of the parts merged are the
// best hits of the whole. Every term and disjunction searcher skips to the
// start of its range through the postings' own skip structure, so the parts
// do not repeat each other's work: on two cores a 100k-tool keyword query
// takes about half the time (BENCHMARKS.md). A query runs in parts only on
// the cores other searches leave free (cores.go).

func init() {
	// Bleve turns a disjunction of more than DisjunctionHeapTakeover (10)
	// clauses from a slice of searchers into a heap. A keyword-mode query
	// has 11 (ten fields and the fuzzy clause), and over them the slice is
	// faster: keyword p50 at 100k synthetic tools 6.3 → 5.6 ms
	// (BENCHMARKS.md). The slice also adds the clauses' scores in one fixed
	// order, where the heap's order depends on where a search started.
	searcher.DisjunctionHeapTakeover = max(searcher.DisjunctionHeapTakeover, 16)
}

// splitDocs is the number of documents per part below which a query is not
// divided: a part costs its own searcher set-up (a term lookup per query
// word and field), which only pays on large indexes.
const splitDocs = 25_000

// maxParts bounds the searches one query runs at once.
const maxParts = 8

// splitParts returns how many parts a query over docs documents runs in.
func splitParts(docs uint64, perPart int) int {
	if perPart <= 0 {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), maxParts, int(docs/uint64(perPart))))
}

// snapshotPin is the index snapshot every part of a divided query must
// search: a merge or a write between the parts' snapshots renumbers
// documents, and bounds taken on two snapshots could then leave a document
// out or count it twice.
type snapshotPin struct {
	want  bleveindex.IndexReader
	moved atomic.Bool // a part saw another snapshot
}

// partQuery matches what q matches among the documents of part of parts
// of the index.
type partQuery struct {
	q           query.Query
	part, parts int
	pin         *snapshotPin // nil: any snapshot
}

// Searcher implements query.Query.
func (p partQuery) Searcher(ctx context.Context, r bleveindex.IndexReader, m mapping.IndexMapping, o search.SearcherOptions) (search.Searcher, error) {
	if p.pin != nil && r != p.pin.want {
		p.pin.moved.Store(true)
		return searcher.NewMatchNoneSearcher(r)
	}
	segs, ok := r.(interface {
		Segments() []*scorch.SegmentSnapshot
	})
	if !ok {
		// Not a scorch snapshot: its document numbers are not ranges, so
		// the first part takes every document.
		if p.part == 0 {
			return p.q.Searcher(ctx, r, m, o)
		}
		return searcher.NewMatchNoneSearcher(r)
	}
	lo, hi := partBounds(segs.Segments(), p.part, p.parts)
	if lo >= hi {
		return searcher.NewMatchNoneSearcher(r)
	}
	inner, err := p.q.Searcher(withPart(ctx, lo, hi), r, m, o)
	if err != nil {
		return nil, err
	}
	return &partSearcher{Searcher: inner, lo: lo, hi: hi}, nil
}

// partBounds returns the range [lo, hi) of internal document numbers of
// part of parts: the parts hold about as many live documents each. The
// bounds of consecutive parts meet, so the parts cover every document
// number once.
func partBounds(segs []*scorch.SegmentSnapshot, part, parts int) (lo, hi uint64) {
	var live int64
	for _, s := range segs {
		live += s.LiveSize()
	}
	bound := func(k int) uint64 {
		if k <= 0 {
			return 0
		}
		if k >= parts {
			return math.MaxUint64
		}
		want := live * int64(k) / int64(parts)
		var off uint64
		var acc int64
		for _, s := range segs {
			l := s.LiveSize()
			if acc+l > want {
				// Deleted documents are spread evenly enough inside a
				// segment for a linear share.
				return off + uint64(float64(s.FullSize())*float64(want-acc)/float64(l))
			}
			acc += l
			off += uint64(s.FullSize())
		}
		return off
	}
	return bound(part), bound(part + 1)
}

// partSearcher passes on the matches of its searcher whose internal
// document numbers are in [lo, hi).
type partSearcher struct {
	search.Searcher
	lo, hi  uint64
	started bool
	done    bool
}

func (s *partSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	if s.done {
		return nil, nil
	}
	if !s.started {
		s.started = true
		if s.lo > 0 {
			d, err := s.Searcher.Advance(ctx, docNumber(s.lo))
			return s.keep(ctx, d, err)
		}
	}
	d, err := s.Searcher.Next(ctx)
	return s.keep(ctx, d, err)
}

func (s *partSearcher) Advance(ctx *search.SearchContext, id bleveindex.IndexInternalID) (*search.DocumentMatch, error) {
	if s.done {
		return nil, nil
	}
	s.started = true
	if len(id) == 8 && binary.BigEndian.Uint64(id) < s.lo {
		id = docNumber(s.lo)
	}
	d, err := s.Searcher.Advance(ctx, id)
	return s.keep(ctx, d, err)
}

// keep drops a match past the end of the range, and ends the part there.
func (s *partSearcher) keep(ctx *search.SearchContext, d *search.DocumentMatch, err error) (*search.DocumentMatch, error) {
	if err != nil || d == nil {
		return d, err
	}
	if len(d.IndexInternalID) == 8 && binary.BigEndian.Uint64(d.IndexInternalID) >= s.hi {
		s.done = true
		if ctx != nil && ctx.DocumentMatchPool != nil {
			ctx.DocumentMatchPool.Put(d)
		}
		return nil, nil
	}
	return d, nil
}

// docNumber is scorch's internal ID of document number n.
func docNumber(n uint64) bleveindex.IndexInternalID {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}
