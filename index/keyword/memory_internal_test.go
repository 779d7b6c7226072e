package keyword

import (
	"sync"
	"testing"
)

// TestSumMemoryKept: an arena and an accumulator given back on one
// goroutine are the ones the next search takes on another (a sync.Pool
// kept them to the P they were given back on), emptied, the searchers
// of the arena's leaves let go; and no more than sumMemoryKept of each
// are kept.
func TestSumMemoryKept(t *testing.T) {
	var m sumMemory
	a, acc := m.arena(), m.accumulator()
	a.read = append(a.read, taatHit{7, 1})
	a.leaves = append(a.leaves, pruneLeaf{tc: &termClause{}})
	acc.add(3, 0.5)
	m.putArena(a)
	m.putAccumulator(acc)
	var a2 *pruneArena
	var acc2 *accumulator
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		a2, acc2 = m.arena(), m.accumulator()
	}()
	wg.Wait()
	if a2 != a || acc2 != acc {
		t.Fatal("arena() and accumulator() on another goroutine made new ones, want the ones given back")
	}
	if len(a2.read) != 0 || cap(a2.read) == 0 || len(a2.leaves) != 0 {
		t.Errorf("the arena taken again has %d postings (capacity %d) and %d leaves, want none, its memory kept", len(a2.read), cap(a2.read), len(a2.leaves))
	}
	if l := a2.leaves[:1][0]; l.tc != nil {
		t.Error("the arena kept a leaf's searcher")
	}
	if got := acc2.collect(nil); len(got) != 0 {
		t.Errorf("the accumulator taken again holds %v, want nothing", got)
	}
	var many []*pruneArena
	for range 3 * sumMemoryKept() {
		many = append(many, m.arena())
	}
	for _, a := range many {
		m.putArena(a)
	}
	if len(m.arenas) != sumMemoryKept() {
		t.Errorf("%d arenas kept after %d given back, want %d", len(m.arenas), len(many), sumMemoryKept())
	}
	var nilMem *sumMemory
	if nilMem.arena() == nilMem.arena() {
		t.Error("a nil sumMemory handed out one arena twice")
	}
}
