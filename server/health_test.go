package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/embedtest"
	"github.com/toolscout/toolscout/search"

	"github.com/toolscout/toolscout/server/gateway"
)

// probe GETs h and returns the status code and body.
func probe(t *testing.T, h http.Handler) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// unloadedLive returns a Live index over a data dir on disk, with
// nothing loaded.
func unloadedLive(t *testing.T) *search.Live {
	t.Helper()
	store, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live, err := search.NewLive(search.LiveOptions{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	return live
}

// TestReadiness follows /readyz through a server's life: 503 while
// nothing is indexed, 503 while the vectors are embedded (the keyword
// index already answers), 200 once both are loaded, 503 again from the
// moment the server drains. /healthz answers 200 throughout.
func TestReadiness(t *testing.T) {
	t.Parallel()
	live := unloadedLive(t)
	m := NewMetrics()
	srv := New(Options{Live: live, Metrics: m})
	check := func(step string, want error) {
		t.Helper()
		if err := srv.Ready(); !errors.Is(err, want) {
			t.Errorf("%s: Ready() = %v, want %v", step, err, want)
		}
		code, body := probe(t, srv.ReadyHandler())
		wantCode, wantBody := http.StatusOK, "ready"
		if want != nil {
			wantCode, wantBody = http.StatusServiceUnavailable, "not ready: "+want.Error()
		}
		if code != wantCode || body != wantBody {
			t.Errorf("%s: /readyz = %d %q, want %d %q", step, code, body, wantCode, wantBody)
		}
		if code, body := probe(t, HealthHandler()); code != http.StatusOK || body != "ok" {
			t.Errorf("%s: /healthz = %d %q, want 200 ok", step, code, body)
		}
		ready := 0.0
		if want == nil {
			ready = 1
		}
		if v, _ := sample(scrape(t, m), "toolscout_ready", ""); v != ready {
			t.Errorf("%s: toolscout_ready = %v, want %v", step, v, ready)
		}
	}
	check("nothing loaded", ErrIndexLoading)
	specs, err := index.ParseCatalog("test", []byte(testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	emb := embedtest.NewBlocking()
	loaded := make(chan error, 1)
	go func() {
		_, err := live.Load(context.Background(), specs, emb, nil)
		loaded <- err
	}()
	<-live.Loaded()
	check("keyword index loaded, vectors embedding", ErrSemanticLoading)
	close(emb.Release)
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	check("loaded", nil)
	srv.Drain()
	check("draining", ErrDraining)
}

// TestReadyInFallback: a server whose index failed to load and that
// lists every tool directly instead (the eager fallback) is ready.
func TestReadyInFallback(t *testing.T) {
	t.Parallel()
	live := unloadedLive(t)
	srv := New(Options{Live: live, Fallback: string(ExposeEager)})
	if err := srv.Ready(); !errors.Is(err, ErrIndexLoading) {
		t.Fatalf("before anything: Ready() = %v, want %v", err, ErrIndexLoading)
	}
	specs, _ := index.ParseCatalog("test", []byte(testCatalog))
	cat, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	live.UseCatalog(cat) // what serve does when the load fails
	srv.FallBackToEager("test")
	if err := srv.Ready(); err != nil {
		t.Errorf("in the eager fallback: Ready() = %v, want nil", err)
	}
}

// TestReadinessWaitsForUpstreams: a gateway is not ready while an
// upstream server's first connection attempt is pending (here one that
// never answers, cut by its connect timeout); once every server has
// answered or failed once, it is, and the metrics say which servers are
// up.
func TestReadinessWaitsForUpstreams(t *testing.T) {
	t.Parallel()
	hang := fakeConfig(t, "hang", "hang")
	hang.ConnectTimeout = 2 * time.Second
	m := NewMetrics()
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok"), hang},
		MinBackoff: time.Minute, MaxBackoff: time.Minute}, Options{Metrics: m})
	if err := env.srv.Ready(); !errors.Is(err, ErrUpstreamsStarting) {
		t.Errorf("right after start: Ready() = %v, want %v", err, ErrUpstreamsStarting)
	}
	if code, body := probe(t, env.srv.ReadyHandler()); code != http.StatusServiceUnavailable || strings.Contains(body, "hang") {
		t.Errorf("right after start: /readyz = %d %q, want 503 naming no server", code, body)
	}
	waitFor(t, "ready", func() bool { return env.srv.Ready() == nil })
	if code, _ := probe(t, env.srv.ReadyHandler()); code != http.StatusOK {
		t.Errorf("once every upstream answered or failed: /readyz = %d, want 200", code)
	}
	fams := scrape(t, m)
	for _, tc := range []struct {
		server string
		up     float64
	}{{"fake", 1}, {"hang", 0}} {
		if v, ok := sample(fams, "toolscout_upstream_up", "server="+tc.server); !ok || v != tc.up {
			t.Errorf("toolscout_upstream_up{server=%q} = %v (present %v), want %v", tc.server, v, ok, tc.up)
		}
	}
	if v, _ := sample(fams, "toolscout_upstream_tools", "server=fake"); v == 0 {
		t.Error("toolscout_upstream_tools{server=\"fake\"} = 0, want its tools")
	}
}

// TestReadinessWaitsForFirstAttempts (issue 52, item 6): with the
// tools of every server but one known from the last run (the index is
// whole at once), the server is not ready while that one is in its
// first connection attempt, and is once the startup wait has passed
// even though it still is: a load balancer is not kept waiting for a
// server stuck connecting.
func TestReadinessWaitsForFirstAttempts(t *testing.T) {
	t.Parallel()
	hang := fakeConfig(t, "hang", "hang")
	hang.ConnectTimeout = time.Minute
	e := knownGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "local", "ok"), hang},
		Known: []index.ListedTools{fakeKnown(t, "local")}}, Options{StartupWait: time.Second})
	if code, body := probe(t, e.srv.ReadyHandler()); code != http.StatusServiceUnavailable || !strings.Contains(body, ErrUpstreamsStarting.Error()) {
		t.Errorf("with a server in its first connection attempt: /readyz = %d %q, want 503 %q", code, body, ErrUpstreamsStarting)
	}
	waitFor(t, "ready once the startup wait passed", func() bool { return e.srv.Ready() == nil })
	// Hang is still connecting; local may be too on a loaded machine (a
	// process slower to start than the startup wait), which the wait is
	// also there for.
	if c := e.gw.Upstreams().Connecting(); !slices.Contains(c, "hang") {
		t.Errorf("ready with %v connecting, want hang still connecting (its connect timeout is a minute)", c)
	}
}
