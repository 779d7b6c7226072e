package search

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
)

// TestLiveState walks a Live index through its life and checks its one
// State and the channels derived from it at each step: new (loading,
// ready: no source), loaded (settled), following (not ready until the
// source's first round is indexed), caught up, closed (Swap refuses).
func TestLiveState(t *testing.T) {
	ctx := context.Background()
	live := newLive(t)
	check := func(step string, want State, loaded, settled, ready bool) {
		t.Helper()
		if got := live.State(); got != want {
			t.Errorf("%s: State() = %+v, want %+v", step, got, want)
		}
		for _, c := range []struct {
			name string
			ch   <-chan struct{}
			want bool
		}{{"Loaded", live.Loaded(), loaded}, {"Settled", live.Settled(), settled}, {"Ready", live.Ready(), ready}} {
			select {
			case <-c.ch:
				if !c.want {
					t.Errorf("%s: %s is closed, want open", step, c.name)
				}
			default:
				if c.want {
					t.Errorf("%s: %s is open, want closed", step, c.name)
				}
			}
		}
	}
	check("new", State{Phase: Loading}, false, false, true)
	if _, err := live.Load(ctx, []index.DomainSpec{{Name: "a", Tools: []index.ToolSpec{tool("one", "")}}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	check("loaded", State{Phase: Settled}, true, true, true)
	src := &fakeSource{ready: make(chan struct{}), changed: make(chan struct{}, 1),
		specs: []index.DomainSpec{{Name: "a", Tools: []index.ToolSpec{tool("one", ""), tool("two", "")}}}}
	live.Follow(ctx, src, FollowOptions{})
	check("following", State{Phase: Settled, Following: true}, true, true, false)
	close(src.ready)
	select {
	case <-live.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready 10 s after the source was")
	}
	check("caught up", State{Phase: Settled, Following: true, CaughtUp: true}, true, true, true)
	live.Close()
	check("closed", State{Phase: Settled, Following: true, CaughtUp: true, Closed: true}, true, true, true)
	next, err := store.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if err := live.Swap(ctx, next, live.Engine().Catalog(), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Swap after Close = %v, want ErrClosed", err)
	}
}
