package keyword

import (
	"cmp"
	"fmt"
	"math"
	mathbits "math/bits"
	"slices"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/search"
	segment "github.com/blevesearch/scorch_segment_api/v2"
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
	others     []taatHit
	cand       []taatHit
	curs       []cursor
	scratch    []float64
	top, field []float64
}

// zeroed returns buf resized to n zeros, reusing its memory when it can.
func zeroed(buf []float64, n int) []float64 {
	buf = slices.Grow(buf[:0], n)[:n]
	clear(buf)
	return buf
}

// prunedSums counts the sums that skipped postings, and carriedWindows
// the windows that skipped postings at the k-th best score carried from
// the windows before them, for tests.
var prunedSums, carriedWindows atomic.Int64

// pruneLeaf is a clause of the pruned sum: a term clause, or another
// searcher read whole.
type pruneLeaf struct {
	group int // the top sum's clause it belongs to
	tc    *termClause
	other search.Searcher
	bound float64
	// lo, hi: its postings read in the window, in document order, in
	// the shared list (an other leaf: in the arena's others).
	lo, hi int
	// olo, ohi: an other leaf's documents, in the arena's others.
	olo, ohi int
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
//
// It reads the index a window of documents at a time (pruneWindow of a
// segment): a document lives in one window, so its sum is the same read
// whole or window by window, and the window's accumulator, numbered from
// its first document, stays in a core's cache (the index's whole array,
// 8 MB at 1M tools, missed it and was a sixth of the keyword list's CPU:
// docs/benchmarks/2026-12-06-1m-keyword-windows.md). Each segment's
// iterators are read directly, once, forwards (cursor), without
// scorch's 8-byte IDs and segment search. The k-th best full score of
// the windows read is carried to the next: a window starts pruning at
// it instead of at nothing, and reads fewer clauses whole.
func (s *sumSearcher) prunedDrain(ctx *search.SearchContext) ([]taatHit, bool, error) {
	a := s.mem.arena()
	defer s.mem.putArena(a)
	leaves, ok := s.prunable(a.leaves[:0])
	a.leaves = leaves
	if !ok {
		return nil, false, nil
	}
	var segs *segmentPostings
	for _, l := range leaves {
		if l.tc == nil {
			continue
		}
		sp, ok := l.tc.reader.(*segmentPostings)
		if !ok || (segs != nil && sp.segments() != segs.segments()) {
			return nil, false, nil
		}
		segs = sp
	}
	if segs == nil {
		return nil, false, nil
	}
	k := s.topK
	acc := s.mem.accumulator()
	defer s.mem.putAccumulator(acc)

	// Searchers other than terms first, whole: their bound is their best.
	others := a.others[:0]
	negative := false
	for i := range leaves {
		l := &leaves[i]
		if l.other == nil {
			continue
		}
		l.olo = len(others)
		var err error
		if others, err = s.readOther(ctx, l.other, others); err != nil {
			return nil, true, err
		}
		l.ohi = len(others)
		a.others = others
		for _, h := range others[l.olo:l.ohi] {
			if h.score < 0 || math.IsNaN(h.score) {
				negative = true // partial sums would not bound: no pruning
			}
			l.bound = max(l.bound, h.score*(1+pruneSlack))
		}
	}

	order := a.order[:0]
	for i, l := range leaves {
		if l.tc != nil {
			order = append(order, i)
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

	out := getHits()
	// kth is the k-th best full score of the windows read: no document
	// below it is among the best k.
	kth := math.Inf(-1)
	pruned := false
	for seg := range segs.segments() {
		_, off, end := segs.segment(seg)
		lo, hi := max(off, s.part.lo), end
		if s.part.hi > 0 {
			hi = min(hi, s.part.hi)
		}
		if lo >= hi {
			continue
		}
		curs := a.curs[:0]
		for _, l := range leaves {
			var c cursor
			if l.tc != nil {
				sp := l.tc.reader.(*segmentPostings)
				c.it, _, _ = sp.segment(seg)
				c.count, c.docs = sp.pls[seg].Count(), end-off
			}
			curs = append(curs, c)
		}
		a.curs = curs
		for wlo := lo; wlo < hi; wlo += min(pruneWindow, hi-wlo) {
			whi := wlo + min(pruneWindow, hi-wlo)
			var err error
			var cut bool
			if out, cut, err = s.prunedWindow(a, acc, wlo-off, wlo, whi, negative, kth, out); err != nil {
				putHits(out)
				return nil, true, err
			}
			pruned = pruned || cut
			if cut && !math.IsInf(kth, -1) {
				carriedWindows.Add(1)
			}
			if len(out) < k {
				continue
			}
			scratch := a.scratch[:0]
			for _, h := range out {
				scratch = append(scratch, h.score)
			}
			a.scratch = scratch
			kth = kthLargest(scratch, k)
			kept := out[:0]
			for _, h := range out {
				if h.score >= kth {
					kept = append(kept, h)
				}
			}
			out = kept
		}
	}
	if pruned {
		prunedSums.Add(1)
	}
	return out, true, nil
}

// prunedWindow appends to out, in document order, the documents in
// [lo, hi) of a segment (lo is zlo in the segment's own numbers, its
// cursors a.curs) that score at least kth, and says whether it skipped
// postings. negative says the other leaves' scores do not bound (no
// pruning). Documents are numbered from lo inside.
func (s *sumSearcher) prunedWindow(a *pruneArena, acc *accumulator, zlo, lo, hi uint64, negative bool, kth float64, out []taatHit) ([]taatHit, bool, error) {
	k := s.topK
	leaves, order := a.leaves, a.order
	// Every leaf's postings read in the window, leaf after leaf, in the
	// arena.
	read := a.read[:0]
	defer func() { a.read = read }()

	// The other leaves' documents of the window.
	rem := 0.0
	for i := range leaves {
		l := &leaves[i]
		if l.other == nil {
			rem += l.bound
			continue
		}
		hits := a.others[l.olo:l.ohi]
		from, _ := slices.BinarySearchFunc(hits, lo, func(h taatHit, n uint64) int { return cmp.Compare(h.doc, n) })
		to, _ := slices.BinarySearchFunc(hits, hi, func(h taatHit, n uint64) int { return cmp.Compare(h.doc, n) })
		l.lo, l.hi = l.olo+from, l.olo+to
		for _, h := range hits[from:to] {
			acc.add(h.doc-lo, h.score)
		}
	}

	// Read the clauses whole, best bound first, until the bounds left
	// cannot lift a document not yet seen into the best k.
	theta := kth * (1 - pruneSlack)
	if negative {
		theta = math.Inf(-1)
	}
	best := 0.0
	sinceTheta := 0
	next := len(order)
	for oi, li := range order {
		if remaining(rem) < theta {
			next = oi
			break
		}
		l := &leaves[li]
		l.lo = len(read)
		var err error
		if read, err = l.tc.readAll(&a.curs[li], zlo, zlo+(hi-lo), read); err != nil {
			return out, false, err
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
		scratch := acc.partials(a.scratch[:0])
		a.scratch = scratch
		theta = max(theta, kthLargest(scratch, k)*(1-pruneSlack))
	}

	// The candidates: documents seen whose partial sum and the bounds left
	// can still reach the k-th best.
	cand := keepReaching(acc.collect(a.cand[:0]), remaining(rem), theta)
	a.cand = cand

	// The clauses left, probed at the candidates only.
	for _, li := range order[next:] {
		l := &leaves[li]
		l.lo = len(read)
		var err error
		if read, err = l.tc.probe(&a.curs[li], zlo, hi-lo, cand, read); err != nil {
			return out, true, err
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
		scratch := a.scratch[:0]
		for _, c := range cand {
			scratch = append(scratch, c.score)
		}
		a.scratch = scratch
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
			var hits []taatHit
			var base uint64
			if l.other != nil {
				hits, base = a.others[l.lo:l.hi], lo
			} else {
				hits = read[l.lo:l.hi]
			}
			j := 0
			for _, h := range hits {
				doc := h.doc - base
				for j < len(cand) && cand[j].doc < doc {
					j++
				}
				if j == len(cand) {
					break
				}
				if cand[j].doc == doc {
					field[j] += h.score
				}
			}
		}
		for j := range top {
			top[j] += field[j]
		}
	}
	for j, c := range cand {
		if top[j] >= kth {
			out = append(out, taatHit{c.doc + lo, top[j]})
		}
	}
	return out, next < len(order), nil
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

// pruneWindow is the most documents a pruned sum adds up at once: an
// accumulator of 256 KB that stays in a core's cache (a segment of 1M
// tools is 8 MB). A variable for tests.
var pruneWindow uint64 = 1 << 15

// cursor reads a segment's postings iterator a window after another:
// the posting that ended a window is kept for the next.
type cursor struct {
	it          segment.PostingsIterator
	count, docs uint64          // the segment's postings and documents
	p           segment.Posting // read from it, not used yet
	done        bool
}

// atOrAfter returns the first posting at or after n (the segment's own
// numbers) not used yet, or nil at the end; n never goes back.
func (c *cursor) atOrAfter(n uint64) (segment.Posting, error) {
	if c.p != nil && c.p.Number() >= n {
		return c.p, nil
	}
	if c.done {
		return nil, nil
	}
	p, err := c.it.Advance(n)
	c.p, c.done = p, p == nil
	return p, err
}

// next uses the posting atOrAfter or next returned, and returns the one
// after it.
func (c *cursor) next() (segment.Posting, error) {
	if c.done {
		return nil, nil
	}
	p, err := c.it.Next()
	c.p, c.done = p, p == nil
	return p, err
}

// readAll appends the clause's postings of a segment's cursor in [zlo,
// zhi) (the segment's own numbers), scored, numbered from zlo.
func (c *termClause) readAll(cur *cursor, zlo, zhi uint64, out []taatHit) ([]taatHit, error) {
	p, err := cur.atOrAfter(zlo)
	for ; err == nil && p != nil; p, err = cur.next() {
		n := p.Number()
		if n >= zhi {
			break // kept for the next window
		}
		freq, norm := freqNorm(p)
		out = append(out, taatHit{n - zlo, c.score(freq, norm)})
	}
	if err != nil {
		return out, fmt.Errorf("keyword query: %w", err)
	}
	return out, nil
}

// probe appends the clause's postings of a segment's cursor at the
// candidates' documents, scored, skipping to each (cand in document
// order, numbered from zlo, in a window of docs documents).
func (c *termClause) probe(cur *cursor, zlo, docs uint64, cand []taatHit, out []taatHit) ([]taatHit, error) {
	// The window's share of the segment's postings.
	if uint64(len(cand))*probeDensity*cur.docs > cur.count*docs {
		return c.merge(cur, zlo, cand, out)
	}
	for _, cd := range cand {
		p, err := cur.atOrAfter(cd.doc + zlo)
		if err != nil {
			return out, fmt.Errorf("keyword query: %w", err)
		}
		if p == nil {
			break
		}
		if p.Number() == cd.doc+zlo {
			out = append(out, taatHit{cd.doc, c.score(freqNorm(p))})
		}
	}
	return out, nil
}

// probeDensity: a clause probed at more than one candidate in this many
// of its postings is read through instead (Next), cheaper than skipping
// (Advance) to nearly every posting.
const probeDensity = 32

// merge appends the clause's postings of a segment's cursor at the
// candidates' documents (numbered from zlo), reading it through.
func (c *termClause) merge(cur *cursor, zlo uint64, cand []taatHit, out []taatHit) ([]taatHit, error) {
	if len(cand) == 0 {
		return out, nil
	}
	j := 0
	p, err := cur.atOrAfter(cand[0].doc + zlo)
	for ; err == nil && p != nil; p, err = cur.next() {
		n := p.Number() - zlo
		for cand[j].doc < n {
			if j++; j == len(cand) {
				return out, nil // the posting kept for the next window
			}
		}
		if cand[j].doc == n {
			out = append(out, taatHit{n, c.score(freqNorm(p))})
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
