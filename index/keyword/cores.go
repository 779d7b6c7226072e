package keyword

import (
	"context"
	"runtime"

	"golang.org/x/sync/semaphore"
)

// A keyword query is work for a core from start to end: it reads
// postings and adds scores, and never waits on anything. So the searches
// of an index run on at most one goroutine per core (GOMAXPROCS), and
// the others wait for a core in the order they came (cores), instead of
// all running at once.
//
// Running them all at once left some waiting for a second. With 16
// searchers at 100k tools on two cores, each query in two parts
// (split.go) made 32 goroutines want the two cores: the runtime preempts
// a goroutine that runs for 10 ms onto the global run queue, which a
// core looks at once in 61 scheduling rounds while its own queue holds
// work, so the longest queries waited behind rounds of newer ones
// (keyword p99 0.9-1.0 s against a p50 of 40 ms; the profile:
// docs/benchmarks/2026-12-06-keyword-tail.md). Waiting in order for a
// core bounds a query's wait by the queries ahead of it.
//
// A query that finds cores free takes one for each part of a divided
// query too (split.go); when other searches keep them busy, it runs
// whole: a part pays only on a core nothing else wants.

// coreSlots holds the cores a search runs on: one from start to end,
// and more for the parts of a divided query.
type coreSlots struct {
	cores *semaphore.Weighted
	held  int64
}

// searchCores returns the index's cores, made on first use.
func (k *Index) searchCores() *semaphore.Weighted {
	k.coresOnce.Do(func() { k.cores = semaphore.NewWeighted(int64(max(1, runtime.GOMAXPROCS(0)))) })
	return k.cores
}

// takeCore waits for a core in turn; the error is ctx's.
func (k *Index) takeCore(ctx context.Context) (*coreSlots, error) {
	c := k.searchCores()
	if err := c.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	return &coreSlots{cores: c, held: 1}, nil
}

// parts returns how many of want parts the search can run at once: the
// cores it holds and those free now, without waiting (a search that
// waits for a core comes first).
func (s *coreSlots) parts(want int) int {
	for s.held < int64(want) && s.cores.TryAcquire(1) {
		s.held++
	}
	return int(min(s.held, int64(want)))
}

// release gives the cores back.
func (s *coreSlots) release() {
	s.cores.Release(s.held)
	s.held = 0
}
