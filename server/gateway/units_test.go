package gateway

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/redact"
)

// TestClassed: a classed error reads as the error it wraps and matches
// both it and its class.
func TestClassed(t *testing.T) {
	t.Parallel()
	inner := errors.New("server \"d\" did not answer")
	err := classed(ErrTimeout, inner)
	if err.Error() != inner.Error() || !errors.Is(err, ErrTimeout) || !errors.Is(err, inner) || errors.Is(err, ErrStopped) {
		t.Errorf("classed = %q; Is(ErrTimeout) %v, Is(inner) %v, Is(ErrStopped) %v", err, errors.Is(err, ErrTimeout), errors.Is(err, inner), errors.Is(err, ErrStopped))
	}
}

// TestCapsRefusal: a request a client's capabilities do not cover is
// refused as the go-sdk refuses it; one they cover, or that needs none,
// is not.
func TestCapsRefusal(t *testing.T) {
	t.Parallel()
	all := &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}, Elicitation: &mcp.ElicitationCapabilities{}, RootsV2: &mcp.RootCapabilities{}}
	for _, tc := range []struct {
		name   string
		caps   *mcp.ClientCapabilities
		method string
		want   string // "" for no refusal
	}{
		{"sampling without", &mcp.ClientCapabilities{}, "sampling/createMessage", "client does not support sampling"},
		{"elicitation without", nil, "elicitation/create", "client does not support elicitation"},
		{"roots without", &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}, "roots/list", "client does not support roots"},
		{"sampling with", all, "sampling/createMessage", ""},
		{"elicitation with", all, "elicitation/create", ""},
		{"roots with", all, "roots/list", ""},
		{"another method", nil, "ping", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := capsRefusal(tc.caps, tc.method)
			if (err == nil) != (tc.want == "") || (err != nil && err.Error() != tc.want) {
				t.Errorf("capsRefusal(%s) = %v, want %q", tc.method, err, tc.want)
			}
		})
	}
}

// TestScrubParams: the params of a server's request to a client are
// redacted of the secrets toolscout knows, as a copy (the server's own
// are untouched); without secrets, or with none in them, they pass as
// they are.
func TestScrubParams(t *testing.T) {
	t.Parallel()
	secrets := redact.New("s3cret-value")
	p := &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "send s3cret-value"}}}}
	got := scrubParams(secrets, p)
	if got == p || got.Messages[0].Content.(*mcp.TextContent).Text == "send s3cret-value" || got.MaxTokens != 5 {
		t.Errorf("scrubbed = %+v, want a redacted copy", got.Messages[0].Content)
	}
	if p.Messages[0].Content.(*mcp.TextContent).Text != "send s3cret-value" {
		t.Error("the server's own params were changed")
	}
	clean := &mcp.CreateMessageParams{MaxTokens: 5}
	if scrubParams(secrets, clean) != clean || scrubParams(nil, p) != p || scrubParams[mcp.CreateMessageParams](secrets, nil) != nil {
		t.Error("params without a secret, or without secrets known, were copied")
	}
}

// TestMetaOf: a request's _meta, none for nil params.
func TestMetaOf(t *testing.T) {
	t.Parallel()
	if m := metaOf[mcp.ListRootsParams](nil); m != nil {
		t.Errorf("metaOf(nil) = %v", m)
	}
	p := &mcp.ElicitParams{Meta: mcp.Meta{"k": "v"}}
	if m := metaOf(p); m["k"] != "v" {
		t.Errorf("metaOf = %v", m)
	}
}

// TestSubscriptionsWithoutServer: subscribing on a server that is down
// fails as unavailable and is not recorded; unsubscribing from it
// succeeds (the server forgets its subscriptions anyway).
func TestSubscriptionsWithoutServer(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{{Domain: "down", Command: "/nonexistent/server"}}, MinBackoff: 1 << 62})
	g.WaitReady(context.Background())
	if err := g.Surfaces().SubscribeResource(context.Background(), "down", "x://y"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("SubscribeResource on a down server = %v, want ErrUnavailable", err)
	}
	if g.fleet.byDom["down"].surface.subscription("x://y", false) {
		t.Error("a subscription that failed was recorded")
	}
	if err := g.Surfaces().UnsubscribeResource(context.Background(), "down", "x://y"); err != nil {
		t.Errorf("UnsubscribeResource on a down server = %v, want nil", err)
	}
	if err := g.Surfaces().UnsubscribeResource(context.Background(), "nobody", "x://y"); err == nil {
		t.Error("UnsubscribeResource of an unknown server succeeded")
	}
}

// TestNewDefaults: zero options get their documented defaults.
func TestNewDefaults(t *testing.T) {
	t.Parallel()
	g := New(Options{})
	o := g.opts
	if o.MinBackoff != time.Second || o.MaxBackoff != time.Minute || o.StableAfter != 30*time.Second || o.MaxMessage != MaxUpstreamMessage || g.log == nil {
		t.Errorf("defaults = %+v", o)
	}
	if g.env.routes.maxMessage != MaxUpstreamMessage {
		t.Errorf("the routes' message bound = %d, want MaxUpstreamMessage", g.env.routes.maxMessage)
	}
	if len(g.Specs()) != 0 || len(g.Upstreams().Status()) != 0 || len(g.Surfaces().List()) != 0 {
		t.Error("a gateway of nothing lists something")
	}
	g.WaitReady(context.Background())
}

// TestThrottled: do is called with the session that announced a change,
// not when the change's session was taken already, and the loop ends
// with ctx.
func TestThrottled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan struct{}, 1)
	s1, s2 := &mcp.ClientSession{}, &mcp.ClientSession{}
	queue := make(chan *mcp.ClientSession, 3)
	queue <- s1
	queue <- nil // taken by an earlier do already
	queue <- s2
	take := func() *mcp.ClientSession { return <-queue }
	done := make(chan *mcp.ClientSession, 3)
	ended := make(chan struct{})
	go func() {
		throttled(ctx, changed, take, func(s *mcp.ClientSession) { done <- s })
		close(ended)
	}()
	for range 3 {
		changed <- struct{}{}
	}
	if got := recv(t, done, "do"); got != s1 {
		t.Errorf("first do with %p, want s1", got)
	}
	if got := recv(t, done, "do again"); got != s2 {
		t.Errorf("second do with %p, want s2 (the change whose session was taken calls nothing)", got)
	}
	cancel()
	<-ended
	if len(done) != 0 {
		t.Errorf("%d more calls of do", len(done))
	}
}

// TestWaitKnownHeadStart: with the last run's tools of one server, the
// gateway knows its tools at once: a server the last run did not list
// does not make WaitKnown wait (it adds its tools when it lists them),
// while WaitReady waits for both.
func TestWaitKnownHeadStart(t *testing.T) {
	t.Parallel()
	slow := testUpstream(t, "other", "")
	slow.Env[upstreamDelayEnv] = "60000"
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{{Domain: "test", Command: "/nonexistent/server"}, slow}, Known: lastRun(), MinBackoff: time.Hour})
	g.WaitKnown(context.Background()) // returns: nothing to wait for
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	g.WaitReady(ctx)
	if got := g.Upstreams().Connecting(); !slices.Contains(got, "other") {
		t.Errorf("Connecting() = %q, want other still connecting", got)
	}
}

// TestCallHeadersOfACommandServer: a stdio server is sent no caller's
// credentials, whatever its config says; a remote one that forwards
// Authorization is sent the caller's.
func TestCallHeadersOfACommandServer(t *testing.T) {
	t.Parallel()
	h := http.Header{"Authorization": []string{"Bearer caller"}}
	req := &mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: h}}
	stdio := &UpstreamConfig{Command: "server", ForwardAuthorization: true}
	if got := stdio.callHeaders(context.Background(), req); len(got.headers) != 0 {
		t.Errorf("a stdio server's call headers = %v, want none", got.headers)
	}
	remote := &UpstreamConfig{URL: "http://h/mcp", ForwardAuthorization: true}
	if got := remote.callHeaders(context.Background(), req); got.headers["Authorization"] != "Bearer caller" || got.only {
		t.Errorf("a forwarding remote's call headers = %+v, want the caller's Authorization on top of Headers", got)
	}
}
