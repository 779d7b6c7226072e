package boot

import (
	"context"
	"testing"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/indextest"
	"github.com/toolscout/toolscout/search"
)

// unloaded returns a live index over a new store on disk, nothing
// loaded, and the small catalog's domains.
func unloaded(t *testing.T) (*search.Live, []index.DomainSpec) {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live, err := search.NewLive(search.LiveOptions{Store: st})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	specs, err := index.ParseCatalog("test", []byte(indextest.SmallCatalog))
	if err != nil {
		t.Fatal(err)
	}
	return live, specs
}

// TestFromLiveFollowsTheLiveIndex: a Readiness over a live index that
// someone else loads is at Starting until the load, then Ready (no
// source: the upstreams' tools are known at once), and Wait(Ready) ends.
func TestFromLiveFollowsTheLiveIndex(t *testing.T) {
	live, specs := unloaded(t)
	r := FromLive(live)
	if got := r.State(); got != Starting {
		t.Errorf("State() before the load = %v, want starting", got)
	}
	if isClosed(r.Reached(Loaded)) || isClosed(r.Reached(Settled)) {
		t.Error("Reached(Loaded or Settled) closed before the load")
	}
	if !isClosed(r.Known()) {
		t.Error("Known() open for a live index without a source, want closed")
	}
	if _, err := live.Load(context.Background(), specs, embed.NewBuiltin(embed.BuiltinOptions{}), nil); err != nil {
		t.Fatal(err)
	}
	if got := r.State(); got != Ready {
		t.Errorf("State() after the load = %v, want ready", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hung Wait fails, not hangs
	defer cancel()
	if err := r.Wait(ctx, Ready); err != nil {
		t.Errorf("Wait(Ready) after the load = %v", err)
	}
}

// TestFollowLeavesSettledToTheOwner: a Readiness its owner moves takes
// Loaded from the live index it follows, not Settled: the owner says when
// what follows the load (the eager fallback) is done.
func TestFollowLeavesSettledToTheOwner(t *testing.T) {
	live, specs := unloaded(t)
	r := NewReadiness()
	r.Follow(live)
	if _, err := live.Load(context.Background(), specs, embed.NewBuiltin(embed.BuiltinOptions{}), nil); err != nil {
		t.Fatal(err)
	}
	if got := r.State(); got != Loaded {
		t.Errorf("State() after the live index loaded = %v, want loaded (Settled is the owner's)", got)
	}
	if !isClosed(r.Reached(Loaded)) || isClosed(r.Reached(Settled)) {
		t.Error("want Reached(Loaded) closed and Reached(Settled) open")
	}
	r.Advance(Settled)
	if got := r.State(); got != Ready {
		t.Errorf("State() once settled = %v, want ready", got)
	}
	if err := r.NotReady(false); err != nil {
		t.Errorf("NotReady once ready = %v, want nil", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hung Wait fails, not hangs
	defer cancel()
	if err := r.Wait(ctx, Ready); err != nil {
		t.Errorf("Wait(Ready) once ready = %v", err)
	}
}
