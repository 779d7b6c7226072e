package keyword

import (
	"encoding/binary"
	"fmt"
	"math"
	mathbits "math/bits"
	"slices"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/search"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// A search asks for its best few documents (Query.Size, twice over:
// Search's window), and the sum read term at a time scored every posting
// of every clause for them: at 100k tools about 7 ms, most of a hybrid
// search (docs/benchmarks/2026-12-06-keyword-tail.md). So, when the top
// sum knows how many documents its search keeps (topK), it prunes as
// MaxScore does, term at a time:
//
//   - each term clause's score is below idf × k1 × its query weight
//     (Bleve's BM25 has tf·k1 over tf + k1·(…) > tf), its bound;
//   - the clauses are read whole in descending bound (the rare terms'
//     short lists first) into partial sums, until the bounds of the
//     clauses left add up to less than the k-th best partial sum: a
//     document none of the read clauses matched then cannot reach the
//     best k, and the rest (the common terms' long lists) are only
//     probed at the documents that still can (Advance), dropping those
//     whose partial sum and the bounds left fall below the k-th;
//   - the candidates' scores are then added up again in the clauses'
//     own order, the field sums first, exactly as drain adds them: the
//     same scores to the last bit; every candidate scoring at least the
//     k-th best is handed out, ties at the cut included, so that Bleve's
//     collector (ties by document number) and the sort by ID alike keep
//     what the full sum would have given them.
//
// Every comparison with a bound keeps a margin of pruneSlack, far above
// the rounding of a sum of a few hundred terms, so that rounding can
// only keep a document, never drop one. A clause other than a term read
// directly (the fuzzy clause) is read whole first; its bound is its best
// score. TestPrunedSumIsTheFullSum compares the two on random queries.

// pruneSlack is the relative margin of the bounds' comparisons.
const pruneSlack = 1e-9

// minPrunePostings is the fewest postings a top sum prunes at: below
// it, reading them all costs less than the bookkeeping (at 10k synthetic
// tools, about 9,000 postings a query, pruning measured a median 1.5× the
// full sum's; at 100k, about 80,000, 0.72×). A variable for tests.
var minPrunePostings uint64 = 32768

// pruneArena is a pruned sum's working memory: its leaves and their
// order, every posting it read, the candidates and their sums, and the
// scratch of the k-th best. Each list is as long as a query's postings
// or candidates (at 100k tools tens of thousands of entries), and made
// anew for each query they were about half of a keyword-mode query's
// bytes (docs/benchmarks/2026-12-06-garbage.md); an index keeps its
// arenas between queries (sumMemory), their lists emptied but kept, so
// that a steady stream of queries reads into the same memory.
type pruneArena struct {
	leaves     []pruneLeaf
	order      []int
	read       []taatHit
	cand       []taatHit
	scratch    []float64
	top, field []float64
}

// zeroed returns buf resized to n zeros, reusing its memory when it can.
func zeroed(buf []float64, n int) []float64 {
	buf = slices.Grow(buf[:0], n)[:n]
	clear(buf)
	return buf
}

// prunedSums counts the sums that skipped postings, for tests.
var prunedSums atomic.Int64

// pruneLeaf is a clause of the pruned sum: a term clause, or another
// searcher read whole.
type pruneLeaf struct {
	group int // the top sum's clause it belongs to
	tc    *termClause
	other search.Searcher
	bound float64
	// lo, hi: its postings read, in document order, in the shared list.
	lo, hi int
}

// prunable appends the leaves of s in clause order to leaves, or returns
// false when s has a clause that is neither a term read directly, a sum
// of such, nor a searcher read whole at the top, or too few postings to
// be worth it.
func (s *sumSearcher) prunable(leaves []pruneLeaf) ([]pruneLeaf, bool) {
	var postings uint64
	for g, c := range s.clauses {
		switch c := c.(type) {
		case *termClause:
			leaves = append(leaves, pruneLeaf{group: g, tc: c})
			postings += c.Count()
		case *sumSearcher:
			if !c.taat {
				return nil, false
			}
			for _, cc := range c.clauses {
				if tc, ok := cc.(*termClause); ok {
					leaves = append(leaves, pruneLeaf{group: g, tc: tc})
				} else {
					leaves = append(leaves, pruneLeaf{group: g, other: cc})
				}
				postings += cc.Count()
			}
		default:
			leaves = append(leaves, pruneLeaf{group: g, other: c})
		}
	}
	if postings < minPrunePostings || postings <= 4*uint64(s.topK) {
		return leaves, false
	}
	for i := range leaves {
		tc := leaves[i].tc
		if tc == nil {
			continue
		}
		b := tc.idf * search.BM25_k1 * tc.queryWeight * tc.tfBound()
		if !(b > 0) || math.IsInf(b, 0) {
			return leaves, false
		}
		leaves[i].bound = b * (1 + pruneSlack)
	}
	return leaves, true
}

// prunedDrain is drain for the documents that can be among the best
// s.topK, or false (nothing read) when s cannot be pruned.
func (s *sumSearcher) prunedDrain(ctx *search.SearchContext) ([]taatHit, bool, error) {
	a := s.mem.arena()
	defer s.mem.putArena(a)
	leaves, ok := s.prunable(a.leaves[:0])
	a.leaves = leaves
	if !ok {
		return nil, false, nil
	}
	k := s.topK
	// Every leaf's postings read, leaf after leaf, in the arena: a list
	// as long as a query's postings.
	read := a.read[:0]
	defer func() { a.read = read }()
	acc := s.mem.accumulator()
	defer s.mem.putAccumulator(acc)

	// Searchers other than terms first, whole: their bound is their best.
	negative := false
	for i := range leaves {
		l := &leaves[i]
		if l.other == nil {
			continue
		}
		l.lo = len(read)
		var err error
		if read, err = s.readOther(ctx, l.other, read); err != nil {
			return nil, true, err
		}
		l.hi = len(read)
		for _, h := range read[l.lo:l.hi] {
			if h.score < 0 || math.IsNaN(h.score) {
				negative = true // partial sums would not bound: no pruning
			}
			l.bound = max(l.bound, h.score*(1+pruneSlack))
			acc.add(h.doc, h.score)
		}
	}

	order := a.order[:0]
	rem := 0.0
	for i, l := range leaves {
		if l.tc != nil {
			order = append(order, i)
			rem += l.bound
		}
	}
	// Most bound per posting read first: the short lists of rare terms,
	// which lower the bounds left at the least cost.
	worth := func(l pruneLeaf) float64 { return l.bound / float64(max(l.tc.Count(), 1)) }
	slices.SortStableFunc(order, func(a, b int) int {
		wa, wb := worth(leaves[a]), worth(leaves[b])
		switch {
		case wa > wb:
			return -1
		case wa < wb:
			return 1
		}
		return 0
	})
	a.order = order

	// Read the clauses whole, best bound first, until the bounds left
	// cannot lift a document not yet seen into the best k.
	scratch := a.scratch[:0]
	defer func() { a.scratch = scratch }()
	theta, best := math.Inf(-1), 0.0
	sinceTheta := 0
	next := len(order)
	for oi, li := range order {
		l := &leaves[li]
		l.lo = len(read)
		var err error
		if read, err = l.tc.readAll(s.part, read); err != nil {
			return nil, true, err
		}
		l.hi = len(read)
		for _, h := range read[l.lo:l.hi] {
			acc.add(h.doc, h.score)
			best = max(best, acc.score[h.doc])
		}
		rem -= l.bound
		if oi == len(order)-1 {
			break
		}
		sinceTheta += l.hi - l.lo
		// The k-th best partial sum is at most the best: not worth
		// finding until the bounds left fall below that.
		if negative || acc.n < k || sinceTheta < acc.n || remaining(rem) >= best {
			continue
		}
		sinceTheta = 0
		scratch = acc.partials(scratch[:0])
		theta = kthLargest(scratch, k) * (1 - pruneSlack)
		if remaining(rem) < theta {
			next = oi + 1
			break
		}
	}
	if next == len(order) {
		// Nothing left to prune: every clause was read whole.
		theta = math.Inf(-1)
	} else {
		prunedSums.Add(1)
	}

	// The candidates: documents seen whose partial sum and the bounds left
	// can still reach the k-th best.
	cand := keepReaching(acc.collect(a.cand[:0]), remaining(rem), theta)
	a.cand = cand

	// The clauses left, probed at the candidates only.
	var id [8]byte
	for _, li := range order[next:] {
		l := &leaves[li]
		l.lo = len(read)
		var err error
		if read, err = l.tc.probe(cand, id[:], read); err != nil {
			return nil, true, err
		}
		l.hi = len(read)
		// Add the scores found to the candidates' partial sums.
		j := 0
		for _, h := range read[l.lo:l.hi] {
			for cand[j].doc < h.doc {
				j++
			}
			cand[j].score += h.score
		}
		rem -= l.bound
		scratch = scratch[:0]
		for _, c := range cand {
			scratch = append(scratch, c.score)
		}
		if len(scratch) >= k {
			theta = max(theta, kthLargest(scratch, k)*(1-pruneSlack))
		}
		cand = keepReaching(cand, remaining(rem), theta)
	}

	// The candidates' scores, added up again in the clauses' order, as
	// drain adds them.
	a.top, a.field = zeroed(a.top, len(cand)), zeroed(a.field, len(cand))
	top, field := a.top, a.field
	for g := range s.clauses {
		clear(field)
		for _, l := range leaves {
			if l.group != g {
				continue
			}
			j := 0
			for _, h := range read[l.lo:l.hi] {
				for j < len(cand) && cand[j].doc < h.doc {
					j++
				}
				if j == len(cand) {
					break
				}
				if cand[j].doc == h.doc {
					field[j] += h.score
				}
			}
		}
		for j := range top {
			top[j] += field[j]
		}
	}
	cut := math.Inf(-1)
	if len(top) > k {
		scratch = append(scratch[:0], top...)
		cut = kthLargest(scratch, k)
	}
	out := getHits()
	for j, c := range cand {
		if top[j] >= cut {
			out = append(out, taatHit{c.doc, top[j]})
		}
	}
	return out, true, nil
}

// tfBound bounds the term-frequency factor of the clause's BM25,
// tf/(tf + k1·(1-b+b·fl/avg)) with tf = √freq: a term occurs at most as
// many times as its field has words, fl ≥ freq = tf², so the factor is
// at most x/(x + c + d·x²) over x ≥ 1, c = k1·(1-b), d = k1·b/avg,
// greatest at x = √(c/d). d is taken a millionth smaller: a field's
// length is read back from a float32 norm.
func (c *termClause) tfBound() float64 {
	cc := search.BM25_k1 * (1 - search.BM25_b)
	d := search.BM25_k1 * search.BM25_b / c.avgDocLength * (1 - 1e-6)
	x := math.Sqrt(cc / d)
	if !(x >= 1) {
		x = 1
	}
	f := x / (x + cc + d*x*x)
	if !(f > 0) || f > 1 {
		return 1
	}
	return f
}

// remaining is the bounds left, with the margin.
func remaining(rem float64) float64 {
	return max(rem, 0) * (1 + pruneSlack)
}

// keepReaching keeps the candidates whose partial sum and the bounds left
// reach theta.
func keepReaching(cand []taatHit, rem, theta float64) []taatHit {
	if math.IsInf(theta, -1) {
		return cand
	}
	out := cand[:0]
	for _, c := range cand {
		if c.score*(1+pruneSlack)+rem >= theta {
			out = append(out, c)
		}
	}
	return out
}

// partials appends the partial sums of the documents touched.
func (a *accumulator) partials(out []float64) []float64 {
	if !a.any {
		return out
	}
	for w := a.lo / 64; w <= a.hi/64; w++ {
		for bits := a.seen[w]; bits != 0; bits &= bits - 1 {
			out = append(out, a.score[w*64+uint64(mathbits.TrailingZeros64(bits))])
		}
	}
	return out
}

// kthLargest returns the k-th largest of v (1-based, k ≤ len(v)),
// reordering v.
func kthLargest(v []float64, k int) float64 {
	lo, hi, want := 0, len(v)-1, k-1
	for lo < hi {
		// Median of three, descending partition (Hoare).
		mid := lo + (hi-lo)/2
		a, b, c := v[lo], v[mid], v[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for v[i] > pivot {
				i++
			}
			for v[j] < pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return v[want]
		}
	}
	return v[want]
}

// readAll appends the clause's postings in part, scored.
func (c *termClause) readAll(part partRange, out []taatHit) ([]taatHit, error) {
	var tm *bleveindex.TermFieldDoc
	var err error
	if part.lo > 0 {
		var id [8]byte
		binary.BigEndian.PutUint64(id[:], part.lo)
		tm, err = c.reader.Advance(id[:], c.tfd.Reset())
	} else {
		tm, err = c.reader.Next(c.tfd.Reset())
	}
	for ; err == nil && tm != nil; tm, err = c.reader.Next(c.tfd.Reset()) {
		if len(tm.ID) != 8 {
			return out, errNotScorch
		}
		n := binary.BigEndian.Uint64(tm.ID)
		if part.hi > 0 && n >= part.hi {
			break
		}
		out = append(out, taatHit{n, c.score(tm.Freq, tm.Norm)})
	}
	if err != nil {
		return out, fmt.Errorf("keyword query: %w", err)
	}
	return out, nil
}

// probe appends the clause's postings at the candidates' documents,
// scored, skipping to each (cand in document order).
func (c *termClause) probe(cand []taatHit, id []byte, out []taatHit) ([]taatHit, error) {
	if uint64(len(cand))*probeDensity > c.Count() {
		return c.merge(cand, out)
	}
	have := false
	var at uint64
	var score float64
	for _, cd := range cand {
		if !have || at < cd.doc {
			binary.BigEndian.PutUint64(id, cd.doc)
			tm, err := c.reader.Advance(id, c.tfd.Reset())
			if err != nil {
				return out, fmt.Errorf("keyword query: %w", err)
			}
			if tm == nil {
				break
			}
			if len(tm.ID) != 8 {
				return out, errNotScorch
			}
			have, at = true, binary.BigEndian.Uint64(tm.ID)
			if at >= cd.doc {
				score = c.score(tm.Freq, tm.Norm)
			}
		}
		if at == cd.doc {
			out = append(out, taatHit{at, score})
		}
	}
	return out, nil
}

// probeDensity: a clause probed at more than one candidate in this many
// of its postings is read through instead (Next), cheaper than skipping
// (Advance) to nearly every posting.
const probeDensity = 32

// merge appends the clause's postings at the candidates' documents,
// reading it through.
func (c *termClause) merge(cand []taatHit, out []taatHit) ([]taatHit, error) {
	if len(cand) == 0 {
		return out, nil
	}
	j := 0
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], cand[0].doc)
	tm, err := c.reader.Advance(id[:], c.tfd.Reset())
	for ; err == nil && tm != nil; tm, err = c.reader.Next(c.tfd.Reset()) {
		if len(tm.ID) != 8 {
			return out, errNotScorch
		}
		n := binary.BigEndian.Uint64(tm.ID)
		for cand[j].doc < n {
			if j++; j == len(cand) {
				return out, nil
			}
		}
		if cand[j].doc == n {
			out = append(out, taatHit{n, c.score(tm.Freq, tm.Norm)})
		}
	}
	if err != nil {
		return out, fmt.Errorf("keyword query: %w", err)
	}
	return out, nil
}

// readOther appends every document of a searcher read through Bleve, in
// part, with its score.
func (s *sumSearcher) readOther(ctx *search.SearchContext, c search.Searcher, out []taatHit) ([]taatHit, error) {
	err := s.eachOther(ctx, c, func(doc uint64, score float64) { out = append(out, taatHit{doc, score}) })
	return out, err
}
