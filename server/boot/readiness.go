package boot

import (
	"context"
	"sync"
)

// State is how far a server's start has come. It only moves forward.
type State int

const (
	// Starting: the index is loading; searches answer with no tools.
	Starting State = iota
	// Loaded: the first catalog is searchable by keyword (or the load
	// failed and the start has settled without it).
	Loaded
	// Settled: the load has ended and what follows from it is done:
	// semantic ranking is ready or failed, the eager fallback applied or
	// the server told to stop.
	Settled
	// Ready: besides, the upstream servers' first round of tools is
	// indexed (at once without upstream servers).
	Ready
)

// String names the state, for logs and errors.
func (s State) String() string {
	switch s {
	case Starting:
		return "starting"
	case Loaded:
		return "loaded"
	case Settled:
		return "settled"
	case Ready:
		return "ready"
	}
	return "unknown"
}

// Readiness is a start's State and the way to wait for one. The zero
// value is not usable: make one with NewReadiness. Safe for concurrent
// use.
type Readiness struct {
	mu      sync.Mutex
	s       State
	reached [Ready + 1]chan struct{}
}

// NewReadiness returns a Readiness at Starting.
func NewReadiness() *Readiness {
	r := &Readiness{}
	for i := range r.reached {
		r.reached[i] = make(chan struct{})
	}
	close(r.reached[Starting])
	return r
}

// State returns the state now.
func (r *Readiness) State() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s
}

// Advance moves the state to s, and so past every state before it; a
// state behind the current one (or unknown) changes nothing.
func (r *Readiness) Advance(s State) {
	if s < Starting || s > Ready {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for ; r.s < s; r.s++ {
		close(r.reached[r.s+1])
	}
}

// Reached returns a channel closed once the state is s or later (never,
// for an unknown state).
func (r *Readiness) Reached(s State) <-chan struct{} {
	if s < Starting || s > Ready {
		return nil
	}
	return r.reached[s]
}

// Wait returns nil once the state is s or later, or ctx's error when it
// ends first.
func (r *Readiness) Wait(ctx context.Context, s State) error {
	select {
	case <-r.Reached(s):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
