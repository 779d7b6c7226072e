package boot

import (
	"context"
	"errors"
	"testing"
	"time"
)

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestReadinessMovesForward(t *testing.T) {
	tests := []struct {
		name    string
		advance []State
		want    State
	}{
		{name: "new", advance: nil, want: Starting},
		{name: "loaded", advance: []State{Loaded}, want: Loaded},
		{name: "straight to settled passes loaded", advance: []State{Settled}, want: Settled},
		{name: "never back", advance: []State{Ready, Loaded}, want: Ready},
		{name: "in order", advance: []State{Loaded, Settled, Ready}, want: Ready},
		{name: "unknown states change nothing", advance: []State{Loaded, State(-1), State(9)}, want: Loaded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReadiness()
			for _, s := range tt.advance {
				r.Advance(s)
			}
			if got := r.State(); got != tt.want {
				t.Errorf("State() after %v = %v, want %v", tt.advance, got, tt.want)
			}
			for s := Starting; s <= Ready; s++ {
				if got, want := closed(r.Reached(s)), s <= tt.want; got != want {
					t.Errorf("Reached(%v) closed = %v at %v, want %v", s, got, tt.want, want)
				}
			}
		})
	}
}

func TestReadinessWait(t *testing.T) {
	r := NewReadiness()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Wait(ctx, Loaded); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait(Loaded) at Starting with ctx done = %v, want context.Canceled", err)
	}
	if err := r.Wait(ctx, State(7)); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait(unknown state) = %v, want context.Canceled", err)
	}
	done := make(chan error, 1)
	bound, stop := context.WithTimeout(context.Background(), time.Minute) // a hung Wait fails, not hangs
	defer stop()
	go func() { done <- r.Wait(bound, Settled) }()
	r.Advance(Settled)
	if err := <-done; err != nil {
		t.Errorf("Wait(Settled) after Advance(Settled) = %v, want nil", err)
	}
	if got := Settled.String(); got != "settled" {
		t.Errorf("Settled.String() = %q, want settled", got)
	}
}

// TestNotReady: what a readiness probe answers at each state, without a
// server: the reason of the first thing missing, draining before all,
// and an upstream server still in its first connection attempt keeping
// a Ready start not ready.
func TestNotReady(t *testing.T) {
	tests := []struct {
		state      State
		draining   bool
		connecting bool
		want       error
	}{
		{state: Starting, want: ErrIndexLoading},
		{state: Loaded, want: ErrSemanticLoading},
		{state: Settled, want: ErrUpstreamsStarting},
		{state: Ready, want: nil},
		{state: Starting, connecting: true, want: ErrIndexLoading},
		{state: Loaded, connecting: true, want: ErrSemanticLoading},
		{state: Settled, connecting: true, want: ErrUpstreamsStarting},
		{state: Ready, connecting: true, want: ErrUpstreamsStarting},
		{state: Starting, draining: true, want: ErrDraining},
		{state: Ready, draining: true, want: ErrDraining},
		{state: Ready, draining: true, connecting: true, want: ErrDraining},
	}
	for _, tt := range tests {
		if got := NotReady(tt.state, tt.draining, tt.connecting); !errors.Is(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("NotReady(%v, draining %v, connecting %v) = %v, want %v", tt.state, tt.draining, tt.connecting, got, tt.want)
		}
		r := NewReadiness()
		r.Advance(tt.state)
		r.Upstreams(func() []string {
			if tt.connecting {
				return []string{"files"}
			}
			return nil
		}, time.Now().Add(time.Hour))
		if got := r.NotReady(tt.draining); got != NotReady(tt.state, tt.draining, tt.connecting) {
			t.Errorf("Readiness at %v, connecting %v: NotReady = %v, want the package's answer", tt.state, tt.connecting, got)
		}
	}
}

// TestConnectingEndsWithTheStartupWait: a server still connecting keeps
// the start from being ready only within the startup wait; without
// Upstreams, nothing is connecting.
func TestConnectingEndsWithTheStartupWait(t *testing.T) {
	r := NewReadiness()
	r.Advance(Ready)
	if r.Connecting() {
		t.Error("Connecting() without Upstreams = true, want false")
	}
	still := func() []string { return []string{"files"} }
	r.Upstreams(still, time.Now().Add(-time.Second)) // the wait has passed
	if r.Connecting() {
		t.Error("Connecting() after the startup wait = true, want false")
	}
	if err := r.NotReady(false); err != nil {
		t.Errorf("NotReady after the startup wait = %v, want nil", err)
	}
	w := NewReadiness()
	w.Advance(Ready)
	w.Upstreams(still, time.Now().Add(time.Hour))
	w.Upstreams(func() []string { return nil }, time.Now().Add(time.Hour)) // the first call wins
	if err := w.NotReady(false); !errors.Is(err, ErrUpstreamsStarting) {
		t.Errorf("NotReady within the startup wait, a server connecting = %v, want %v", err, ErrUpstreamsStarting)
	}
}
