package keyword

import (
	"runtime"
	"sync"
)

// A sum read term at a time works in memory as long as the index: an
// accumulator of a score per document (taat.go) and, pruned, an arena
// of the postings it read and its candidates (prune.go). Taken from
// sync.Pool, they were often made anew: a pool keeps the last object
// given back on a P to that P, so a search that ran on the other core
// found none and grew its own from nothing, and a collection empties
// what was not taken since the one before (at 100k tools about 90 KB of
// each hybrid search, docs/benchmarks/2026-12-06-garbage.md). So each
// index keeps its own (sumMemory): the searches of an index run on at
// most one core each (cores.go), so a few of each serve them all, and
// they are kept until the index closes.

// sumMemory is an index's accumulators and arenas between searches.
type sumMemory struct {
	mu     sync.Mutex
	accs   []*accumulator
	arenas []*pruneArena
}

// sumMemoryKept is the most of each kind kept: two accumulators per
// core (a sum and the field sum it drains), as many arenas. A search
// beyond them (one that holds no core) makes its own, dropped after.
func sumMemoryKept() int { return 2 * runtime.GOMAXPROCS(0) }

// accumulator returns an empty accumulator: one kept, or a new one; a
// nil m always makes one.
func (m *sumMemory) accumulator() *accumulator {
	if m == nil {
		return new(accumulator)
	}
	return takeKept(&m.mu, &m.accs)
}

// putAccumulator empties a and keeps it for the next search.
func (m *sumMemory) putAccumulator(a *accumulator) {
	a.collect(nil) // an error leaves scores behind: cleared for the next query
	if m != nil {
		keep(&m.mu, &m.accs, a)
	}
}

// arena returns an empty arena: one kept, or a new one; a nil m always
// makes one.
func (m *sumMemory) arena() *pruneArena {
	if m == nil {
		return new(pruneArena)
	}
	return takeKept(&m.mu, &m.arenas)
}

// putArena empties a's lists, keeping their memory, lets go of the
// searchers its leaves point to, and keeps it for the next search.
func (m *sumMemory) putArena(a *pruneArena) {
	clear(a.leaves) // the leaves hold the query's searchers
	clear(a.curs)   // and the cursors their iterators
	a.curs = a.curs[:0]
	a.leaves, a.order, a.read, a.others, a.cand = a.leaves[:0], a.order[:0], a.read[:0], a.others[:0], a.cand[:0]
	a.scratch, a.top, a.field = a.scratch[:0], a.top[:0], a.field[:0]
	if m != nil {
		keep(&m.mu, &m.arenas, a)
	}
}

// takeKept takes the last of list, guarded by mu, or makes a new one.
func takeKept[T any](mu *sync.Mutex, list *[]*T) *T {
	mu.Lock()
	defer mu.Unlock()
	if n := len(*list); n > 0 {
		a := (*list)[n-1]
		*list = (*list)[:n-1]
		return a
	}
	return new(T)
}

// keep adds a to list, guarded by mu, unless it holds sumMemoryKept.
func keep[T any](mu *sync.Mutex, list *[]*T, a *T) {
	mu.Lock()
	if len(*list) < sumMemoryKept() {
		*list = append(*list, a)
	}
	mu.Unlock()
}
