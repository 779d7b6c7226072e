package boot

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/indextest"
	"github.com/toolscout/toolscout/search"
)

// fallbacker records the server's fallback.
type fallbacker struct {
	mu      sync.Mutex
	reasons []string
}

func (f *fallbacker) FallBackToEager(reason string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reasons = append(f.reasons, reason)
	return true
}

func (f *fallbacker) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reasons...)
}

// newStart returns a start over a new store on disk in a test folder,
// loading the small catalog with emb (an error: the embedder cannot be
// made).
func newStart(t *testing.T, emb embed.Embedder, embErr error, o Options) (*Starter, *search.Live) {
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
	specs, err := index.ParseCatalog("test", []byte(indextest.SmallCatalog))
	if err != nil {
		t.Fatal(err)
	}
	o.Live, o.Store, o.Base = live, st, specs
	o.Embedder = func() (embed.Embedder, error) { return emb, embErr }
	s := New(o)
	t.Cleanup(func() { s.Close() })
	return s, live
}

// waitState waits for s to reach want, failing the test if it has not
// after a minute (a bound for a hung start, not a timing check).
func waitState(t *testing.T, s *Starter, want State) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Readiness().Wait(ctx, want); err != nil {
		t.Fatalf("start still at %v, want %v: %v", s.Readiness().State(), want, err)
	}
}

func TestStarterLoadsThenIsReady(t *testing.T) {
	var progressed, afterLoad sync.WaitGroup
	progressed.Add(1)
	afterLoad.Add(1)
	s, live := newStart(t, embed.NewBuiltin(embed.BuiltinOptions{}), nil, Options{
		Progress: func(embed.Embedder) (func(int, int), func()) {
			return func(int, int) {}, progressed.Done
		},
		AfterLoad: afterLoad.Done,
	})
	if got := s.Readiness().State(); got != Starting {
		t.Errorf("State() before Open = %v, want starting", got)
	}
	fb := &fallbacker{}
	s.Open(context.Background(), fb)
	s.Open(context.Background(), fb) // a second Open does nothing
	waitState(t, s, Ready)
	progressed.Wait()
	afterLoad.Wait()
	if n := live.Engine().Catalog().Len(); n != 6 {
		t.Errorf("catalog after the start = %d tools, want 6", n)
	}
	if name := live.Engine().EmbedderName(); name == "" {
		t.Error("EmbedderName() after the start is empty, want the built-in embedder's")
	}
	if r := fb.got(); len(r) != 0 {
		t.Errorf("a start that loads fell back: %q", r)
	}
	if s.Store() == nil {
		t.Error("Store() = nil, want the store served")
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close() = %v, want nil", err)
	}
	if err := live.Swap(context.Background(), nil, nil, nil); !errors.Is(err, search.ErrClosed) {
		t.Errorf("the live index after Close: Swap = %v, want search.ErrClosed", err)
	}
}

func TestStarterWhenTheIndexCannotLoad(t *testing.T) {
	down := errors.New("embedder down")
	tests := []struct {
		name      string
		fallback  bool
		wantTools int
		wantStop  bool
	}{
		{name: "eager fallback lists the catalog", fallback: true, wantTools: 6},
		{name: "without fallback the server stops", fallback: false, wantTools: 0, wantStop: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stopped []error
			var mu sync.Mutex
			s, live := newStart(t, nil, down, Options{Fallback: tt.fallback, Stop: func(err error) {
				mu.Lock()
				stopped = append(stopped, err)
				mu.Unlock()
			}})
			fb := &fallbacker{}
			s.Open(context.Background(), fb)
			waitState(t, s, Settled)
			if n := live.Engine().Catalog().Len(); n != tt.wantTools {
				t.Errorf("catalog once settled = %d tools, want %d", n, tt.wantTools)
			}
			reasons := fb.got()
			if tt.fallback && (len(reasons) != 1 || !strings.Contains(reasons[0], down.Error())) {
				t.Errorf("fallback reasons = %q, want one naming %q", reasons, down)
			}
			if !tt.fallback && len(reasons) != 0 {
				t.Errorf("fell back without the fallback: %q", reasons)
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.wantStop != (len(stopped) == 1 && errors.Is(stopped[0], down)) {
				t.Errorf("Stop called with %v, want it called with %v: %v", stopped, down, tt.wantStop)
			}
		})
	}
}

func TestStarterCloseWithoutOpen(t *testing.T) {
	s, live := newStart(t, nil, nil, Options{})
	if err := s.Close(); err != nil {
		t.Errorf("Close() without Open = %v", err)
	}
	s.Open(context.Background(), &fallbacker{}) // after Close: nothing starts
	if got := s.Readiness().State(); got != Starting {
		t.Errorf("State() after Close then Open = %v, want starting", got)
	}
	if n := live.Engine().Catalog().Len(); n != 0 {
		t.Errorf("catalog after Close then Open = %d tools, want 0", n)
	}
}
