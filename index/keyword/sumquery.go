package keyword

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// A keyword query is scored as BM25 is defined: the sum, over the query's
// terms and the weighted fields, of field weight × the term's BM25 score in
// that field. Bleve's own match and disjunction queries score two things
// more (BENCHMARKS.md, "Keyword scoring"):
//
//   - a coordination factor: every disjunction multiplies its sum by the
//     share of its clauses that matched, so with 50 query words a tool
//     matching 10 of them a little outranks one matching 4 of them well;
//   - a query weight of boost × idf × norm on every term, so each term
//     counts with its IDF squared.
//
// Over long requests both cost nDCG@10 on sealtools-dev; keywordQuery
// builds its own sum of Bleve's term searchers instead, and keeps both
// behaviours as options (Scoring) for measurement.

// Scoring selects what a keyword query's score adds to plain BM25.
type Scoring struct {
	// Coord multiplies each sum by the share of its clauses matched, as
	// Bleve's disjunctions do.
	Coord bool
	// IDFWeight multiplies each term's score by Bleve's query weight
	// (boost × idf × a norm shared by the query), squaring its IDF.
	IDFWeight bool
	// BleveLengths keeps Bleve's own average field lengths
	// (bm25stats.go).
	BleveLengths bool
}

// keywordQuery is the query of a Query's text over weighted fields,
// scored as Scoring says.
type keywordQuery struct {
	text    string
	fields  []string // sorted, weight > 0
	weights FieldWeights
	fuzzy   float64
	scoring Scoring
	// ceiling, when set, receives the query's attainable score (Ceiling).
	ceiling *atomicFloat
	// sparse says the query is advanced to a few documents (Query.IDs):
	// read them document at a time, not every posting term at a time.
	sparse bool
	// bleveTerms reads every term through Bleve's term searcher, never
	// directly (taat.go): the direct path's reference in tests.
	bleveTerms bool
	// automata, when set, serves the fuzzy clause's automata
	// (fuzzy.go); nil: Bleve's match query builds them.
	automata *fuzzyAutomata
	// topK, when > 0, says the search keeps only its best topK
	// documents: a sum read term at a time hands out only those that can
	// be among them (prune.go).
	topK int
	// mem, when set, is the index's memory that sums read term at a time
	// work in (memory.go); nil: each sum makes its own.
	mem *sumMemory
}

// Searcher implements query.Query: one term searcher per distinct query
// term and field (a term the query repeats counts that many times), summed
// per field, the fields summed.
func (q *keywordQuery) Searcher(ctx context.Context, r bleveindex.IndexReader, m mapping.IndexMapping, o search.SearcherOptions) (search.Searcher, error) {
	type term struct {
		text  string
		count int
	}
	analyze := func(name string) ([]term, error) {
		a := m.AnalyzerNamed(name)
		if a == nil {
			return nil, fmt.Errorf("keyword query: no analyzer %s", name)
		}
		var terms []term
		seen := map[string]int{}
		for _, tok := range a.Analyze([]byte(q.text)) {
			if i, ok := seen[string(tok.Term)]; ok {
				terms[i].count++
				continue
			}
			seen[string(tok.Term)] = len(terms)
			terms = append(terms, term{string(tok.Term), 1})
		}
		return terms, nil
	}
	terms, err := analyze(TextAnalyzer)
	if err != nil {
		return nil, err
	}
	var unstemmed []term
	if q.weights[FieldTextExact] > 0 {
		if unstemmed, err = analyze(TextExactAnalyzer); err != nil {
			return nil, err
		}
	}
	exact := []term{{strings.ToLower(q.text), 1}}
	if q.scoring.BleveLengths {
		ctx = context.WithValue(ctx, search.BM25StatsKey, nil)
	}

	top := newSumSearcher(q.scoring, o.Explain)
	_, scorchReader := r.(interface {
		Segments() []*scorch.SegmentSnapshot
	})
	taat := scorchReader && !o.Explain && !q.scoring.Coord && !q.sparse
	part, _ := ctx.Value(partRangeKey{}).(partRange)
	top.taat, top.part, top.mem = taat, part, q.mem
	if taat {
		top.topK = q.topK
	}
	docs, err := r.DocCount()
	if err != nil {
		return nil, err
	}
	var dicts *segmentDicts
	if taat && !q.bleveTerms {
		dicts = newSegmentDicts(r)
	}
	var ceiling float64
	fail := func(err error) (search.Searcher, error) {
		top.Close()
		return nil, err
	}
	for _, f := range q.fields {
		ts := terms
		switch f {
		case FieldName, FieldQualifiedName:
			ts = exact
		case FieldTextExact:
			ts = unstemmed
		}
		field := newSumSearcher(q.scoring, o.Explain)
		field.taat, field.part, field.mem = taat, part, q.mem
		for _, t := range ts {
			boost := q.weights[f] * float64(t.count)
			s, err := newTermClause(ctx, r, t.text, f, boost, o, taat && !q.bleveTerms, dicts)
			if err != nil {
				field.Close()
				return fail(err)
			}
			if s.Count() == 0 {
				// Not in the field's dictionary: it matches nothing, and
				// only counts among the clauses.
				s.Close()
				field.total += float64(t.count)
				if f != FieldName && f != FieldQualifiedName {
					ceiling += boost * bm25IDF(docs, 0) * tfOnce
				}
				continue
			}
			ceiling += boost * bm25IDF(docs, s.Count()) * tfOnce
			field.add(s, boost, float64(t.count))
		}
		top.addSum(field)
	}
	if q.ceiling != nil {
		q.ceiling.store(ceiling)
	}
	if q.fuzzy > 0 {
		var fq query.Query
		if q.automata != nil {
			if fq, err = fuzzyNameQuery(m, q.automata, q.text, FieldNameWords, q.fuzzy); err != nil {
				return fail(err)
			}
		} else {
			mq := bleve.NewMatchQuery(q.text)
			mq.SetField(FieldNameWords)
			mq.SetFuzziness(fuzziness)
			mq.SetPrefix(fuzzyPrefix)
			mq.SetBoost(q.fuzzy)
			fq = mq
		}
		s, err := fq.Searcher(ctx, r, m, o)
		if err != nil {
			return fail(err)
		}
		top.add(s, q.fuzzy, 1)
	}
	top.finish()
	return top, nil
}

// tfOnce is BM25's term-frequency factor of a term that occurs once in a
// field of average length: k1·1/(1 + k1).
const tfOnce = 1.2 / (1 + 1.2)

// bm25IDF is the IDF of BM25 as Bleve computes it, for a term in df of
// docs documents.
func bm25IDF(docs, df uint64) float64 {
	return math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
}

// atomicFloat is a float64 that concurrent parts of one query (split.go)
// may store: all store the same value.
type atomicFloat struct{ bits atomic.Uint64 }

func (a *atomicFloat) store(v float64) { a.bits.Store(math.Float64bits(v)) }
func (a *atomicFloat) load() float64   { return math.Float64frombits(a.bits.Load()) }

// sumSearcher matches the documents any of its clauses match and scores
// each by the sum of the matching clauses' scores (times the share of
// clauses matched, with Scoring.Coord). Its clauses are kept in a heap by
// their current document.
type sumSearcher struct {
	scoring  Scoring
	explain  bool
	clauses  []search.Searcher
	boosts   []float64
	counts   []float64 // how many clauses each stands for (coord)
	total    float64   // clauses in all, matching or not (coord)
	currs    []*search.DocumentMatch
	h        clauseHeap
	started  bool
	matching []int

	// taat reads the clauses term at a time (taat.go) into hits, handed
	// out from pos; part limits them to a part of the documents.
	taat bool
	part partRange
	hits []taatHit
	pos  int
	// topK, when > 0, lets drain hand out only the documents that can be
	// among the best topK (prune.go).
	topK int
	// mem is the index's memory drain works in (memory.go), or nil.
	mem *sumMemory
}

func newSumSearcher(sc Scoring, explain bool) *sumSearcher {
	return &sumSearcher{scoring: sc, explain: explain}
}

// add adds a clause of the given boost, standing for count clauses.
func (s *sumSearcher) add(c search.Searcher, boost, count float64) {
	s.clauses = append(s.clauses, c)
	s.boosts = append(s.boosts, boost)
	s.counts = append(s.counts, count)
	s.total += count
	if !s.scoring.IDFWeight {
		// A term searcher scores BM25 × its query weight, boost × idf ×
		// norm: a norm of 1/idf leaves boost × BM25. Its Weight is
		// (boost × idf)².
		if w := c.Weight(); w > 0 {
			c.SetQueryNorm(boost / math.Sqrt(w))
		}
	}
}

// addSum adds a field's sum as one clause; an empty one only counts.
func (s *sumSearcher) addSum(c *sumSearcher) {
	if len(c.clauses) == 0 {
		s.total++
		return
	}
	s.clauses = append(s.clauses, c)
	s.boosts = append(s.boosts, 1)
	s.counts = append(s.counts, 1)
	s.total++
}

// finish sets the query norm, as Bleve's disjunctions do, when scores
// keep Bleve's query weight.
func (s *sumSearcher) finish() {
	if s.scoring.IDFWeight {
		if w := s.Weight(); w > 0 {
			s.SetQueryNorm(1 / math.Sqrt(w))
		}
	}
}

// Weight is the sum of the clauses' weights.
func (s *sumSearcher) Weight() float64 {
	var w float64
	for _, c := range s.clauses {
		w += c.Weight()
	}
	return w
}

// SetQueryNorm passes a shared norm on when scores keep Bleve's query
// weight; otherwise each term's norm was set when it was added.
func (s *sumSearcher) SetQueryNorm(n float64) {
	if !s.scoring.IDFWeight {
		return
	}
	for _, c := range s.clauses {
		c.SetQueryNorm(n)
	}
}

func (s *sumSearcher) start(ctx *search.SearchContext, advance bleveindex.IndexInternalID) error {
	s.started = true
	if s.taat {
		hits, err := s.drain(ctx)
		if err != nil {
			return err
		}
		s.hits = hits
		if advance != nil {
			s.seek(advance)
		}
		return nil
	}
	s.currs = make([]*search.DocumentMatch, len(s.clauses))
	s.h = clauseHeap{currs: s.currs}
	for i, c := range s.clauses {
		var err error
		if advance != nil {
			s.currs[i], err = c.Advance(ctx, advance)
		} else {
			s.currs[i], err = c.Next(ctx)
		}
		if err != nil {
			return err
		}
		if s.currs[i] != nil {
			s.h.idx = append(s.h.idx, i)
		}
	}
	heap.Init(&s.h)
	return nil
}

// Next returns the next document any clause matches, scored.
func (s *sumSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	if !s.started {
		if err := s.start(ctx, nil); err != nil {
			return nil, err
		}
	}
	if s.taat {
		return s.nextHit(ctx), nil
	}
	if len(s.h.idx) == 0 {
		return nil, nil
	}
	id := s.currs[s.h.idx[0]].IndexInternalID
	s.matching = s.matching[:0]
	for len(s.h.idx) > 0 && bytes.Equal(s.currs[s.h.idx[0]].IndexInternalID, id) {
		s.matching = append(s.matching, heap.Pop(&s.h).(int))
	}
	// Summed in clause order, so that a score does not depend on the
	// heap's order, which depends on where a search started.
	slices.Sort(s.matching)
	rv := s.currs[s.matching[0]]
	var sum, matched float64
	var children []*search.Explanation
	for _, i := range s.matching {
		d := s.currs[i]
		sum += d.Score
		matched += s.counts[i]
		if s.explain {
			children = append(children, d.Expl)
		}
		if d != rv {
			rv.FieldTermLocations = search.MergeFieldTermLocations(rv.FieldTermLocations, []*search.DocumentMatch{d})
		}
	}
	rv.Score = sum
	if s.explain {
		rv.Expl = &search.Explanation{Value: sum, Message: "sum of:", Children: children}
	}
	if s.scoring.Coord && s.total > 0 {
		coord := matched / s.total
		rv.Score = sum * coord
		if s.explain {
			rv.Expl = &search.Explanation{Value: rv.Score, Message: "product of:", Children: []*search.Explanation{
				rv.Expl, {Value: coord, Message: fmt.Sprintf("coord(%g/%g)", matched, s.total)}}}
		}
	}
	for _, i := range s.matching {
		if s.currs[i] != rv {
			ctx.DocumentMatchPool.Put(s.currs[i])
		}
		var err error
		if s.currs[i], err = s.clauses[i].Next(ctx); err != nil {
			return nil, err
		}
		if s.currs[i] != nil {
			heap.Push(&s.h, i)
		}
	}
	return rv, nil
}

// Advance skips to the first document at or after id.
func (s *sumSearcher) Advance(ctx *search.SearchContext, id bleveindex.IndexInternalID) (*search.DocumentMatch, error) {
	if !s.started {
		if err := s.start(ctx, id); err != nil {
			return nil, err
		}
		return s.Next(ctx)
	}
	if s.taat {
		if s.pos < len(s.hits) && len(id) == 8 && s.hits[s.pos].doc < binary.BigEndian.Uint64(id) {
			s.seek(id)
		}
		return s.nextHit(ctx), nil
	}
	s.h.idx = s.h.idx[:0]
	for i, c := range s.clauses {
		if s.currs[i] == nil {
			continue
		}
		if s.currs[i].IndexInternalID.Compare(id) < 0 {
			ctx.DocumentMatchPool.Put(s.currs[i])
			var err error
			if s.currs[i], err = c.Advance(ctx, id); err != nil {
				return nil, err
			}
		}
		if s.currs[i] != nil {
			s.h.idx = append(s.h.idx, i)
		}
	}
	heap.Init(&s.h)
	return s.Next(ctx)
}

// Count is an upper bound: the sum of the clauses' counts.
func (s *sumSearcher) Count() uint64 {
	var n uint64
	for _, c := range s.clauses {
		n += c.Count()
	}
	return n
}

// Close closes every clause, and gives the drained documents back.
func (s *sumSearcher) Close() error {
	putHits(s.hits)
	s.hits, s.pos = nil, 0
	var first error
	for _, c := range s.clauses {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Min is 0: one matching clause is enough.
func (s *sumSearcher) Min() int { return 0 }

// Size estimates the searcher's memory in bytes.
func (s *sumSearcher) Size() int {
	n := 128 + 40*len(s.clauses)
	for _, c := range s.clauses {
		n += c.Size()
	}
	return n
}

// DocumentMatchPoolSize counts the matches held at once: one per clause,
// and the clauses' own. A sum read term at a time holds one (the
// document it hands out) and the matches of the clauses it reads through
// Bleve (the fuzzy clause), one at a time; its direct term clauses and
// nested sums read term at a time hold none. Bleve allocates the pool
// for every query, and a long request's hundreds of clauses made it
// about a twelfth of a keyword query's bytes at 100k tools
// (BENCHMARKS.md, "Scale and concurrency"); a pool too small only
// allocates a match when it runs out, so scores cannot change.
func (s *sumSearcher) DocumentMatchPoolSize() int {
	if s.taat {
		n := 1
		for _, c := range s.clauses {
			switch c := c.(type) {
			case *termClause:
			case *sumSearcher:
				if c.taat {
					n = max(n, c.DocumentMatchPoolSize())
				} else {
					n += c.DocumentMatchPoolSize()
				}
			default:
				n = max(n, 1+c.DocumentMatchPoolSize())
			}
		}
		return n
	}
	n := len(s.clauses)
	for _, c := range s.clauses {
		n += c.DocumentMatchPoolSize()
	}
	return n
}

// clauseHeap orders clause indexes by their current document.
type clauseHeap struct {
	idx   []int
	currs []*search.DocumentMatch
}

func (h clauseHeap) Len() int { return len(h.idx) }
func (h clauseHeap) Less(i, j int) bool {
	return bytes.Compare(h.currs[h.idx[i]].IndexInternalID, h.currs[h.idx[j]].IndexInternalID) < 0
}
func (h clauseHeap) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *clauseHeap) Push(x any)   { h.idx = append(h.idx, x.(int)) }
func (h *clauseHeap) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}
