package search

import (
	"runtime"
	"sync"
)

// kept holds a few objects of one kind between searches: a search's
// scratch (fusionScratch, domainVectorScratch) taken at its start and
// given back emptied at its end, so that a search leaves its answer and
// little else behind. Not a sync.Pool: a pool keeps the last object
// given back on a P to that P, so a search that moved to the other core
// found none and grew its own from nothing, and a collection empties
// what was not taken since the one before (as index/keyword's
// sumMemory found, docs/benchmarks/2026-12-06-garbage.md). The zero
// value is empty and ready.
type kept[T any] struct {
	mu   sync.Mutex
	list []*T
}

// keptMost is the most objects a kept holds: two per core. A search
// beyond them makes its own, dropped after.
func keptMost() int { return 2 * runtime.GOMAXPROCS(0) }

// take returns an object kept, or a new one from make.
func (k *kept[T]) take(make func() *T) *T {
	k.mu.Lock()
	if n := len(k.list); n > 0 {
		x := k.list[n-1]
		k.list[n-1] = nil
		k.list = k.list[:n-1]
		k.mu.Unlock()
		return x
	}
	k.mu.Unlock()
	return make()
}

// keep keeps x, emptied by the caller, unless k holds keptMost.
func (k *kept[T]) keep(x *T) {
	k.mu.Lock()
	if len(k.list) < keptMost() {
		k.list = append(k.list, x)
	}
	k.mu.Unlock()
}
