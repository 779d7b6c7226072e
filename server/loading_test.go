package server

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/embedtest"
)

// TestServeBeforeTheIndexLoads: initialize is answered before the index
// has loaded anything; a discover_tools call made then waits for the
// keyword index, then at most SemanticGrace for the vectors, and is ranked
// by keyword with a notice; once loaded, it is ranked by hybrid.
func TestServeBeforeTheIndexLoads(t *testing.T) {
	t.Parallel()
	live := unloadedLive(t)
	srv := New(Options{Live: live, Domains: []DomainSize{{Name: "github", Tools: 3, Purpose: "repositories and issues"}, {Name: "jira", Tools: 1}, {Name: "weather", Tools: 1}}})
	// arrived is closed when the server gets the first tools/call.
	arrived := make(chan struct{})
	var once sync.Once
	srv.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				once.Do(func() { close(arrived) })
			}
			return next(ctx, method, req)
		}
	})
	start := time.Now()
	cs := connect(t, srv) // initialize
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("initialize took %s with nothing loaded", d)
	}
	if !strings.Contains(cs.InitializeResult().Instructions, "5 tools in 3 domains:\n- github (3 tools): repositories and issues\n- jira (1 tool)\n") {
		t.Errorf("instructions before loading = %q, want the domains and what is known of them", cs.InitializeResult().Instructions)
	}
	answer := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: DiscoverTools, Arguments: map[string]any{"query": "forecast for a city"}})
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		answer <- text(res)
	}()
	// The call is in the server before anything loads; that its answer,
	// below, holds what loaded after proves that it waited.
	<-arrived
	select {
	case got := <-answer:
		t.Fatalf("discover_tools answered before anything was indexed: %s", got)
	default:
	}
	specs, _ := index.ParseCatalog("test", []byte(testCatalog))
	emb := embedtest.NewBlocking()
	loaded := make(chan error, 1)
	go func() {
		_, err := live.Load(context.Background(), specs, emb, nil)
		loaded <- err
	}()
	var got string
	select {
	case got = <-answer:
	case <-time.After(SemanticGrace + 10*time.Second):
		t.Fatal("discover_tools still waiting long after the keyword index loaded")
	}
	if !strings.Contains(got, "weather__get_forecast") || !strings.Contains(got, `"search_mode":"keyword"`) || !strings.Contains(got, "still loading") {
		t.Errorf("answer while the vectors load = %s, want keyword results with a notice", got)
	}
	close(emb.Release)
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, DiscoverTools, map[string]any{"query": "forecast for a city"})
	if !strings.Contains(text(res), `"search_mode":"hybrid"`) {
		t.Errorf("answer once loaded = %s, want hybrid", text(res))
	}
}
