package search

import (
	"context"
	"sync"
)

// Phase is how far a Live index has loaded its first catalog. It only
// moves forward.
type Phase int

const (
	// Loading: no catalog yet; searches answer with no tools.
	Loading Phase = iota
	// Searchable: the first catalog is in the keyword index (Loaded);
	// semantic and hybrid requests are ranked by keyword, with a notice,
	// while the vectors load.
	Searchable
	// Settled: the load returned (Settled): semantic ranking is ready, or
	// failed; or the catalog is served without an index (UseCatalog).
	Settled
)

// String names the phase, for logs and readiness answers.
func (p Phase) String() string {
	switch p {
	case Loading:
		return "loading"
	case Searchable:
		return "searchable"
	case Settled:
		return "settled"
	}
	return "unknown"
}

// State is a Live index's state, in one value: how far it has loaded,
// whether it follows a source and has indexed what the source had at
// start, and whether it is closed.
type State struct {
	Phase Phase
	// Following is set once Follow starts; CaughtUp once Follow's first
	// refresh is done.
	Following, CaughtUp bool
	// Closed is set by Close: Swap refuses from then on.
	Closed bool
}

// Ready reports whether the index holds what its source had at start:
// at once without a source (Follow never called).
func (s State) Ready() bool { return !s.Following || s.CaughtUp }

// state is a Live index's State and the channels that say when it
// reached each point (Loaded, Settled, Ready), which set alone changes:
// the channels are derived from the State, never set on their own.
type state struct {
	mu                     sync.Mutex
	s                      State
	loaded, settled, ready chan struct{}
	stop                   context.CancelFunc // Follow's; nil before
}

func newState() *state {
	st := &state{loaded: make(chan struct{}), settled: make(chan struct{}), ready: make(chan struct{})}
	st.set(func(*State) {})
	return st
}

// get returns the State now.
func (st *state) get() State {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.s
}

// set changes the State through f, then closes the channels of the
// points it reached. Phase never moves back.
func (st *state) set(f func(*State)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	was := st.s.Phase
	f(&st.s)
	st.s.Phase = max(st.s.Phase, was)
	if st.s.Phase >= Searchable {
		closeOnce(st.loaded)
	}
	if st.s.Phase >= Settled {
		closeOnce(st.settled)
	}
	switch {
	case st.s.Ready():
		closeOnce(st.ready)
	case isClosed(st.ready):
		// Following from now on: ready again once caught up.
		st.ready = make(chan struct{})
	}
}

// channel returns the channel of a point, under the lock (Ready's is
// replaced when Follow starts).
func (st *state) channel(c *chan struct{}) <-chan struct{} {
	st.mu.Lock()
	defer st.mu.Unlock()
	return *c
}

func closeOnce(c chan struct{}) {
	if !isClosed(c) {
		close(c)
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
