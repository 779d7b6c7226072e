package boot

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/toolscout/toolscout/search"
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

// Why a server is not ready (NotReady). They name no tool, server or
// path: /readyz answers without authentication.
var (
	ErrDraining          = errors.New("draining: the server is shutting down")
	ErrIndexLoading      = errors.New("the index is loading")
	ErrSemanticLoading   = errors.New("the semantic index is loading")
	ErrUpstreamsStarting = errors.New("upstream servers are connecting")
)

// NotReady is what a readiness probe answers at state s: nil when the
// server answers every request as it should, else why not. draining: the
// server is shutting down; connecting: a configured upstream server is
// still in its first connection attempt within the startup wait (a call
// of its tools would wait for it), which keeps a Ready start not ready.
func NotReady(s State, draining, connecting bool) error {
	switch {
	case draining:
		return ErrDraining
	case s < Loaded:
		return ErrIndexLoading
	case s < Settled:
		return ErrSemanticLoading
	case s < Ready, connecting:
		// The index may hold what the last run kept of the servers
		// (Ready at once): the servers are still connecting all the same.
		return ErrUpstreamsStarting
	}
	return nil
}

// Readiness is a start's State and the way to wait for one. Make one
// with NewReadiness (its owner moves it with Advance: the Starter) or
// FromLive (it follows a live index loaded by someone else: a test, a
// program embedding the server). Safe for concurrent use.
//
// Following a live index (Follow, FromLive), Loaded is reached once the
// live index is searchable, and the upstream servers' tools are known
// while the live index holds what its source had at start (Known: it
// stops being so when the index starts following a source, until it has
// caught up). Settled is the owner's (Advance), or the live index's load
// having returned (FromLive).
type Readiness struct {
	mu          sync.Mutex
	s           State
	reached     [Ready + 1]chan struct{}
	live        *search.Live // followed; nil: Advance alone
	liveSettles bool         // FromLive: Settled is the live index's
	readyWatch  bool         // a goroutine closes reached[Ready] (watchReady)
	// connecting names the upstream servers still in their first
	// connection attempt, asked until upstreamsUntil (Upstreams).
	connecting     func() []string
	upstreamsUntil time.Time
}

// Upstreams takes the upstream servers' first connection attempts into
// the readiness from now until until (the startup wait, counted from
// the server's start): while connecting names a server, a call of its
// tools would wait for it, so the start is not ready (Connecting). The
// first call wins.
func (r *Readiness) Upstreams(connecting func() []string, until time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.connecting == nil {
		r.connecting, r.upstreamsUntil = connecting, until
	}
}

// Connecting reports whether an upstream server is still in its first
// connection attempt within the startup wait (Upstreams).
func (r *Readiness) Connecting() bool {
	r.mu.Lock()
	f, until := r.connecting, r.upstreamsUntil
	r.mu.Unlock()
	return f != nil && time.Now().Before(until) && len(f()) > 0
}

// NewReadiness returns a Readiness at Starting, moved by Advance alone
// until it follows a live index (Follow).
func NewReadiness() *Readiness {
	r := &Readiness{}
	for i := range r.reached {
		r.reached[i] = make(chan struct{})
	}
	close(r.reached[Starting])
	return r
}

// FromLive returns the readiness of live, loaded by someone else: every
// state is the live index's (Loaded: searchable; Settled: its load
// returned; Ready: besides, it holds what its source had at start).
func FromLive(live *search.Live) *Readiness {
	r := NewReadiness()
	r.live, r.liveSettles = live, true
	return r
}

// Follow takes Loaded and Known from live from now on; Settled stays the
// owner's. It does nothing when r follows a live index already.
func (r *Readiness) Follow(live *search.Live) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = live
	}
}

// State returns the state now.
func (r *Readiness) State() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.s
	if r.live != nil {
		if s < Loaded && isClosed(r.live.Loaded()) {
			s = Loaded
		}
		if s < Settled && r.liveSettles && isClosed(r.live.Settled()) {
			s = Settled
		}
		if s == Settled && isClosed(r.live.Ready()) {
			s = Ready
		}
	}
	return s
}

// NotReady is what a readiness probe answers now (the package's
// NotReady at State, with Connecting); draining: the server is shutting
// down.
func (r *Readiness) NotReady(draining bool) error {
	s := r.State()
	return NotReady(s, draining, s == Ready && r.Connecting())
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s >= s || r.live == nil {
		return r.reached[s]
	}
	switch s {
	case Loaded:
		return r.live.Loaded()
	case Settled:
		if r.liveSettles {
			return r.live.Settled()
		}
	case Ready:
		if !r.readyWatch {
			r.readyWatch = true
			var settled <-chan struct{} = r.reached[Settled]
			if r.liveSettles {
				settled = r.live.Settled()
			}
			go r.watchReady(settled)
		}
	}
	return r.reached[s]
}

// watchReady advances the Readiness to Ready once settled is closed and
// the live index it follows holds what its source had at start. It ends
// then, or never when the start never gets there: one goroutine, made by
// the first Reached(Ready).
func (r *Readiness) watchReady(settled <-chan struct{}) {
	<-settled
	for {
		<-r.live.Ready()
		if isClosed(r.live.Ready()) { // not replaced by a Follow since
			r.Advance(Ready)
			return
		}
	}
}

// Known returns a channel closed while the index holds the upstream
// servers' first round of tools (what its source had at start; at once
// without a source), independent of the load's end: a wait for the
// servers' tools need not wait for semantic ranking.
func (r *Readiness) Known() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s >= Ready || r.live == nil {
		return r.reached[Ready]
	}
	return r.live.Ready()
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

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
