package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/redact"
)

// TestRoutesSoleRoute: a message of a server that marks nothing goes to
// the call running on it when every such call is one client's; with
// calls of two clients, or none, it goes nowhere, saying why; a route
// ended is forgotten.
func TestRoutesSoleRoute(t *testing.T) {
	t.Parallel()
	rt := newRoutes(nil, MaxUpstreamMessage)
	alice, bob := &mcp.ServerSession{}, &mcp.ServerSession{}
	sse := &UpstreamConfig{Domain: "old", URL: "http://127.0.0.1:1/sse", Transport: "sse"}
	if r, _, why := rt.routeFor(sse, nil); r != nil || why != "no call of a client is running on it" {
		t.Errorf("routeFor with no call = %v, %q", r, why)
	}
	a1, end1 := rt.open(context.Background(), "old", alice, nil)
	_, end2 := rt.open(context.Background(), "old", alice, nil)
	other, endOther := rt.open(context.Background(), "elsewhere", bob, nil)
	defer endOther()
	if r, marked, _ := rt.routeFor(sse, nil); r == nil || r.ss != alice || marked {
		t.Errorf("routeFor with alice's calls = %v (marked %v), want one of alice's", r, marked)
	}
	b1, end3 := rt.open(context.Background(), "old", bob, nil)
	if r, _, why := rt.routeFor(sse, nil); r != nil || !strings.Contains(why, "calls of several clients are running") {
		t.Errorf("routeFor with alice's and bob's calls = %v, %q; want none, saying why", r, why)
	}
	end1()
	end2()
	if r, _, _ := rt.routeFor(sse, nil); r != b1 {
		t.Errorf("routeFor after alice's calls ended = %v, want bob's", r)
	}
	end3()
	// A mark names a route of its own domain only.
	if r, marked, _ := rt.routeFor(sse, mcp.Meta{routeMetaKey: other.id + "." + other.key}); r != nil || marked {
		t.Errorf("a mark of another server's call found %v", r)
	}
	_ = a1
	rt.mu.Lock()
	n, left := len(rt.byID), len(rt.inflight["old"])
	rt.mu.Unlock()
	if n != 1 || left != 0 {
		t.Errorf("%d routes kept, %d in flight on old; want only the other server's", n, left)
	}
}

// TestRoutesUnmarked: over Streamable HTTP a message of a call comes
// marked, so an unmarked one came outside any call; over stdio the
// reader marks what it can, so an unmarked one came when no single
// client's calls ran. Neither reaches a client.
func TestRoutesUnmarked(t *testing.T) {
	t.Parallel()
	rt := newRoutes(nil, MaxUpstreamMessage)
	for _, tc := range []struct {
		cfg *UpstreamConfig
		why string
	}{
		{&UpstreamConfig{Domain: "web", URL: "http://127.0.0.1:1/mcp"}, "it came outside any call of a client"},
		{&UpstreamConfig{Domain: "cmd", Command: "server"}, "it came while no call of a client was running on it"},
	} {
		_, end := rt.open(context.Background(), tc.cfg.Domain, &mcp.ServerSession{}, nil)
		if r, _, why := rt.routeFor(tc.cfg, mcp.Meta{}); r != nil || why != tc.why {
			t.Errorf("%s: routeFor(unmarked) = %v, %q; want none, %q", tc.cfg.Domain, r, why, tc.why)
		}
		end()
	}
}

// TestBridgeResumeRefusals: a retry whose requestState names no bridge,
// or another tool's, or that carries no answer, fails saying what to
// do; a call that is no retry is not the bridges'.
func TestBridgeResumeRefusals(t *testing.T) {
	t.Parallel()
	bs := &bridges{byID: map[string]*bridge{}}
	tool := &index.Tool{Domain: "d", Name: "t", QualifiedName: "d__t"}
	b := &bridge{id: "b1", key: "k1", domain: "d", tool: "t", ctx: context.Background(), cancel: func() {}}
	bs.byID[b.id] = b
	retry := func(state string, answers mcp.InputResponseMap) *mcp.CallToolRequest {
		return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "t", RequestState: state, InputResponses: answers}}
	}
	if _, ok, _ := bs.resume(context.Background(), retry("", nil), "d", tool); ok {
		t.Error("a call without a requestState was taken for a retry")
	}
	if _, ok, _ := bs.resume(context.Background(), nil, "d", tool); ok {
		t.Error("a call without a request was taken for a retry")
	}
	for _, tc := range []struct {
		name, state, want string
		answers           mcp.InputResponseMap
	}{
		{"unknown bridge", bridgeState + "nope.k1", "names no call of d__t waiting for input", nil},
		{"wrong key", bridgeState + "b1.guess", "names no call of d__t waiting for input", nil},
		{"nothing pending", bridgeState + "b1.k1", "was answered already", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ok, err := bs.resume(context.Background(), retry(tc.state, tc.answers), "d", tool)
			if !ok || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("resume = %v, %v; want an error saying %q", ok, err, tc.want)
			}
		})
	}
	b.pending = &bridgeAsk{answer: make(chan mcp.InputResponse, 1)}
	if _, _, err := bs.resume(context.Background(), retry(bridgeState+"b1.k1", nil), "d", tool); err == nil || !strings.Contains(err.Error(), "carries no inputResponses") {
		t.Errorf("a retry without the answer = %v", err)
	}
	if b.pending == nil {
		t.Error("a retry without the answer took the pending request")
	}
}

// TestExecuteRedacts: what a server sends back holding a configured
// secret, or the Authorization the caller sent, is redacted from the
// result.
func TestExecuteRedacts(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}, Redactor: redact.New("s3cret-value")})
	g.WaitReady(context.Background())
	res, err := call(g, "test", "echo", map[string]any{"text": "token s3cret-value"})
	if err != nil || strings.Contains(resultText(res), "s3cret-value") || !strings.HasPrefix(resultText(res), "echo: token ") {
		t.Errorf("echo of a secret = %q, %v; want it redacted", resultText(res), err)
	}
}
