package keyword

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	mathbits "math/bits"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/scorer"
	"github.com/blevesearch/bleve/v2/search/searcher"
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
//
// Read through Bleve's term searcher, each posting of a term still cost
// a DocumentMatch from the pool and the scorer's call chain, with its
// explanation and model plumbing, for a few arithmetic operations (a CPU
// profile of a 60-word 4-step request at 10k tools: about 80% of the
// request in the keyword sum, some 45 points of it decoding postings and
// 35 scoring them). So a clause that Bleve would score as plain BM25 is read
// from the index's term field reader directly (termClause), and each
// posting scored with the very formula, constants and order of
// operations of Bleve's TermQueryScorer (bleve/v2 search/scorer,
// scorer_term.go), from the statistics its TermSearcher takes
// (search/searcher, search_term.go): the same scores to the last bit,
// which TestDirectTermsScoreAsBleve checks against Bleve's searcher. Any
// other clause (explained, tf-idf, synonyms, term vectors, the fuzzy
// clause) goes through Bleve as before. BENCHMARKS.md ("Term clauses read
// directly") has the gain.

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
// between queries (memory.go), with a bit per document touched: collect walks the
// bits a word at a time, skipping 64 untouched documents at once (a
// byte per document scanned one by one was a sixth of a 100k-tool
// hybrid query's keyword list, docs/benchmarks/2026-12-06-hybrid-profile.md).
type accumulator struct {
	score  []float64
	seen   []uint64 // bit d%64 of word d/64: document d touched
	lo, hi uint64   // touched documents lie in [lo, hi]
	any    bool
	n      int // touched documents
}

func (a *accumulator) add(doc uint64, s float64) {
	if doc >= uint64(len(a.score)) {
		n := max(doc+1, 2*uint64(len(a.score)))
		a.score = slices.Grow(a.score, int(n)-len(a.score))[:n]
		words := int(n+63) / 64
		a.seen = slices.Grow(a.seen, words-len(a.seen))[:words]
	}
	w, bit := doc/64, uint64(1)<<(doc%64)
	if a.seen[w]&bit == 0 {
		a.seen[w] |= bit
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
	for w := a.lo / 64; w <= a.hi/64; w++ {
		for bits := a.seen[w]; bits != 0; bits &= bits - 1 {
			d := w*64 + uint64(mathbits.TrailingZeros64(bits))
			out = append(out, taatHit{d, a.score[d]})
			a.score[d] = 0
		}
		a.seen[w] = 0
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
	if s.topK > 0 {
		if hits, ok, err := s.prunedDrain(ctx); ok || err != nil {
			return hits, err
		}
	}
	acc := s.mem.accumulator()
	defer s.mem.putAccumulator(acc)
	for _, c := range s.clauses {
		if tc, ok := c.(*termClause); ok {
			if err := tc.drainInto(acc, s.part); err != nil {
				return nil, err
			}
			continue
		}
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
		if err := s.eachOther(ctx, c, acc.add); err != nil {
			return nil, err
		}
	}
	return acc.collect(getHits()), nil
}

// eachOther calls add with each document of a searcher read through
// Bleve, in part, and its score, in document order.
func (s *sumSearcher) eachOther(ctx *search.SearchContext, c search.Searcher, add func(doc uint64, score float64)) error {
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
			return errNotScorch
		}
		n := binary.BigEndian.Uint64(d.IndexInternalID)
		if s.part.hi > 0 && n >= s.part.hi {
			ctx.DocumentMatchPool.Put(d)
			break
		}
		add(n, d.Score)
		ctx.DocumentMatchPool.Put(d)
	}
	return err
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

// termClause is a term's postings in a field, scored with BM25 as
// Bleve's TermSearcher scores them, for a sum read term at a time.
type termClause struct {
	reader bleveindex.TermFieldReader
	tfd    bleveindex.TermFieldDoc
	// As Bleve's TermQueryScorer holds them.
	boost, idf, avgDocLength float64
	queryWeight              float64
	// memo holds the scores of one occurrence by norm (score); scored
	// counts the postings scored before it is made.
	memo   *[memoSize]memoEntry
	scored int
}

var _ search.Searcher = (*termClause)(nil)

// newTermClause returns the searcher of term in field with this boost:
// a termClause when direct and Bleve would score the term with BM25,
// otherwise Bleve's own term searcher.
// With dicts (the query's segments' dictionaries, newSegmentDicts), the
// postings are read from the segments themselves (postings.go).
func newTermClause(ctx context.Context, r bleveindex.IndexReader, term, field string, boost float64, o search.SearcherOptions, direct bool, dicts *segmentDicts) (search.Searcher, error) {
	if !direct || o.Explain || o.Score == "none" || o.IncludeTermVectors || hasSynonyms(ctx, field) {
		return searcher.NewTermSearcher(ctx, r, term, field, boost, o)
	}
	docs, avgDocLength, ok := bm25Metrics(ctx, r, field)
	if !ok {
		return searcher.NewTermSearcher(ctx, r, term, field, boost, o)
	}
	if _, ok := ctx.Value(search.QueryTypeKey).(string); !ok {
		ctx = context.WithValue(ctx, search.QueryTypeKey, search.Term) // as NewTermSearcher, for cost accounting
	}
	var reader bleveindex.TermFieldReader
	var err error
	if dicts != nil {
		reader, err = dicts.postings([]byte(term), field)
	} else {
		reader, err = r.TermFieldReader(ctx, []byte(term), field, true, true, false)
	}
	if err != nil {
		return nil, err
	}
	df := reader.Count()
	return &termClause{
		reader:       reader,
		boost:        boost,
		idf:          math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5)),
		avgDocLength: avgDocLength,
		queryWeight:  1,
	}, nil
}

// hasSynonyms says whether Bleve would search field through synonyms.
func hasSynonyms(ctx context.Context, field string) bool {
	fts, ok := ctx.Value(search.FieldTermSynonymMapKey).(search.FieldTermSynonymMap)
	if !ok {
		return false
	}
	_, ok = fts[field]
	return ok
}

// bm25Metrics returns the document count and average length of field
// that Bleve's term searcher scores BM25 with, and false where Bleve
// would not score BM25 or would fail (the fallback then fails alike).
func bm25Metrics(ctx context.Context, r bleveindex.IndexReader, field string) (docs uint64, avgDocLength float64, ok bool) {
	model, _ := ctx.Value(search.GetScoringModelCallbackKey).(search.GetScoringModelCallbackFn)
	if model == nil || model() != bleveindex.BM25Scoring {
		return 0, 0, false
	}
	var cardinality int
	if st, ok := ctx.Value(search.BM25StatsKey).(*search.BM25Stats); ok {
		docs = uint64(st.DocCount)
		if cardinality, ok = st.FieldCardinality[field]; !ok {
			return 0, 0, false
		}
	} else {
		var err error
		if docs, err = r.DocCount(); err != nil {
			return 0, 0, false
		}
		if br, ok := r.(bleveindex.BM25Reader); ok {
			if cardinality, err = br.FieldCardinality(field); err != nil {
				return 0, 0, false
			}
		}
	}
	if docs == 0 && cardinality == 0 {
		return 0, 0, false
	}
	avgDocLength = math.Ceil(float64(cardinality) / float64(docs))
	return docs, avgDocLength, avgDocLength > 0
}

// score is the score of a posting of freq occurrences and norm, as
// scoreOf computes it: a posting of one occurrence (most of them) takes
// it from the clause's memo of the norms seen, once the clause has read
// memoAfter postings. A field's length takes few values, and the two
// divisions of scoreOf were a seventh of a 1M-tool hybrid query's
// keyword list (docs/benchmarks/2026-12-06-1m-hybrid.md).
func (c *termClause) score(freq uint64, norm float64) float64 {
	if freq != 1 {
		return c.scoreOf(freq, norm)
	}
	if c.memo == nil {
		if c.scored++; c.scored < memoAfter {
			return c.scoreOf(freq, norm)
		}
		c.memo = new([memoSize]memoEntry)
	}
	// A norm is a float32 widened: its low 29 bits are zero.
	key := math.Float64bits(norm)
	e := &c.memo[(key>>29)&(memoSize-1)]
	if e.key == key && e.key != 0 {
		return e.score
	}
	sc := c.scoreOf(freq, norm)
	*e = memoEntry{key, sc}
	return sc
}

// memoSize is the number of norms a clause's memo holds (a power of
// two), and memoAfter the postings a clause reads before it keeps one:
// a long request's many short lists pay nothing for it.
const (
	memoSize  = 64
	memoAfter = 512
)

// memoEntry is a norm's bits and the score of one occurrence with it.
type memoEntry struct {
	key   uint64
	score float64
}

// scoreOf is the score of a posting of freq occurrences and norm, as
// TermQueryScorer.Score computes it, operation for operation.
func (c *termClause) scoreOf(freq uint64, norm float64) float64 {
	var tf float64
	if freq < scorer.MaxSqrtCache {
		tf = scorer.SqrtCache[int(freq)]
	} else {
		tf = math.Sqrt(float64(freq))
	}
	fieldLength := 1 / (norm * norm)
	score := c.idf * (tf * search.BM25_k1) /
		(tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLength/c.avgDocLength)))
	if c.queryWeight != 1.0 {
		score = score * c.queryWeight
	}
	return score
}

// drainInto adds the score of each posting in part to acc.
func (c *termClause) drainInto(acc *accumulator, part partRange) error {
	var tm *bleveindex.TermFieldDoc
	var err error
	if part.lo > 0 {
		tm, err = c.reader.Advance(docNumber(part.lo), c.tfd.Reset())
	} else {
		tm, err = c.reader.Next(c.tfd.Reset())
	}
	for ; err == nil && tm != nil; tm, err = c.reader.Next(c.tfd.Reset()) {
		if len(tm.ID) != 8 {
			return errNotScorch
		}
		n := binary.BigEndian.Uint64(tm.ID)
		if part.hi > 0 && n >= part.hi {
			break
		}
		acc.add(n, c.score(tm.Freq, tm.Norm))
	}
	if err != nil {
		return fmt.Errorf("keyword query: %w", err)
	}
	return nil
}

// match returns tm scored, or nil at the end of the postings.
func (c *termClause) match(ctx *search.SearchContext, tm *bleveindex.TermFieldDoc, err error) (*search.DocumentMatch, error) {
	if err != nil || tm == nil {
		return nil, err
	}
	d := ctx.DocumentMatchPool.Get()
	d.Score = c.score(tm.Freq, tm.Norm)
	d.IndexInternalID = append(d.IndexInternalID, tm.ID...)
	return d, nil
}

// Next returns the next posting, scored.
func (c *termClause) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	tm, err := c.reader.Next(c.tfd.Reset())
	return c.match(ctx, tm, err)
}

// Advance returns the first posting at or after id, scored.
func (c *termClause) Advance(ctx *search.SearchContext, id bleveindex.IndexInternalID) (*search.DocumentMatch, error) {
	tm, err := c.reader.Advance(id, c.tfd.Reset())
	return c.match(ctx, tm, err)
}

// Weight is Bleve's query weight squared: (boost × idf)².
func (c *termClause) Weight() float64 {
	sum := c.boost * c.idf
	return sum * sum
}

// SetQueryNorm sets the query weight to boost × idf × norm, as Bleve's
// scorer does.
func (c *termClause) SetQueryNorm(norm float64) {
	c.queryWeight = c.boost * c.idf * norm
	c.memo = nil // scores of the previous weight
}

// Count is the term's document frequency.
func (c *termClause) Count() uint64 { return c.reader.Count() }

// Close closes the postings' reader.
func (c *termClause) Close() error { return c.reader.Close() }

// Min is 0, as for any term.
func (c *termClause) Min() int { return 0 }

// Size estimates the clause's memory in bytes.
func (c *termClause) Size() int { return 64 + c.reader.Size() + c.tfd.Size() }

// DocumentMatchPoolSize is one: a clause holds one match at a time.
func (c *termClause) DocumentMatchPoolSize() int { return 1 }
