package surface

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// The upstreams of these tests are go-sdk servers over Streamable HTTP
// (real servers, on httptest), reached through a real gateway; the
// client is the go-sdk's, on a go-sdk server that the surface is
// attached to, as toolscout's views are.

// upstream serves an MCP server that setup fills, and returns its URL.
func upstream(t *testing.T, opts *mcp.ServerOptions, setup func(*mcp.Server)) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, opts)
	setup(srv)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// gatewayOf starts a gateway over the upstreams (domain → URL) and
// waits for their first connection.
func gatewayOf(t *testing.T, ups map[string]string) *gateway.Gateway {
	t.Helper()
	var cfg []gateway.UpstreamConfig
	for d, u := range ups {
		cfg = append(cfg, gateway.UpstreamConfig{Domain: d, URL: u, Transport: "http", ConnectTimeout: 30 * time.Second})
	}
	gw := gateway.New(gateway.Options{Upstreams: cfg, MinBackoff: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	gw.Start(ctx)
	t.Cleanup(func() { cancel(); gw.Close() })
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	gw.WaitReady(wctx)
	return gw
}

// client serves s on a go-sdk server (PageSize: the go-sdk's default
// when 0) and connects a go-sdk client to it in memory.
func client(t *testing.T, s *Surface, pageSize int) *mcp.ClientSession {
	t.Helper()
	return clientWith(t, s, pageSize, nil, nil)
}

// clientWith is client with the client's options, on a server for the
// caller vis describes.
func clientWith(t *testing.T, s *Surface, pageSize int, copts *mcp.ClientOptions, vis Visibility) *mcp.ClientSession {
	t.Helper()
	so := &mcp.ServerOptions{PageSize: pageSize}
	s.Configure(so, vis)
	srv := mcp.NewServer(&mcp.Implementation{Name: "toolscout", Version: "test"}, so)
	srv.AddReceivingMiddleware(s.Middleware(vis))
	s.Attach(srv, vis)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, copts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func textResource(uri, text string) (*mcp.Resource, mcp.ResourceHandler) {
	return &mcp.Resource{URI: uri, Name: uri[strings.LastIndex(uri, "/")+1:], MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: text}}}, nil
		}
}

func manyResources(n int) func(*mcp.Server) {
	return func(srv *mcp.Server) {
		for i := range n {
			srv.AddResource(textResource(fmt.Sprintf("mem://r/%05d", i), "x"))
		}
	}
}

func code(err error) int64 {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr.Code
	}
	return 0
}

func TestWrapURI(t *testing.T) {
	for _, tc := range []struct{ domain, uri string }{
		{"everything", "demo://resource/static/document/architecture.md"},
		{"my_files", "file:///home/a b/c.txt?x=1#frag"},
		{"web", "https://example.com/a/"},
		{"d", "toolscout://other/x://y"},
	} {
		t.Run(tc.domain, func(t *testing.T) {
			w := WrapURI(tc.domain, tc.uri)
			d, u, ok := UnwrapURI(w)
			if !ok || d != tc.domain || u != tc.uri {
				t.Errorf("UnwrapURI(%q) = %q, %q, %v, want %q, %q", w, d, u, ok, tc.domain, tc.uri)
			}
		})
	}
	for _, bad := range []string{"demo://x", "toolscout://", "toolscout://d", "toolscout:///x", "toolscout://d/"} {
		if _, _, ok := UnwrapURI(bad); ok {
			t.Errorf("UnwrapURI(%q) ok, want not a wrapped URI", bad)
		}
	}
}

func TestBuildLeavesOutWhatCannotBeListed(t *testing.T) {
	st := build(nil, []gateway.Surface{{
		Domain: "a", Listed: true, Prompts: true, Resources: true,
		PromptList:   []*mcp.Prompt{{Name: "p"}, {Name: "p", Description: "again"}, {Name: ""}},
		ResourceList: []*mcp.Resource{{URI: "mem://ok", Name: "ok"}, {URI: "mem://%zz", Name: "bad"}, {URI: "mem://ok", Name: "dup"}},
		TemplateList: []*mcp.ResourceTemplate{{URITemplate: "mem://t/{id}", Name: "t"}, {URITemplate: "mem://t/{id", Name: "broken"}, {URITemplate: "mem://" + strings.Repeat("{x}", 3000), Name: "huge"}},
	}}, false, slogDiscard())
	if len(st.prompts) != 1 || st.prompts["a__p"] == nil || st.prompts["a__p"].listed.Description != "" {
		t.Errorf("prompts = %v, want a__p once (the first)", st.prompts)
	}
	if len(st.resources) != 1 || st.resources["toolscout://a/mem://ok"] == nil || st.resources["toolscout://a/mem://ok"].listed.Name != "a__ok" {
		t.Errorf("resources = %v, want toolscout://a/mem://ok named a__ok", st.resources)
	}
	if len(st.templates) != 1 || st.templates["toolscout://a/mem://t/{id}"] == nil {
		t.Errorf("templates = %v, want toolscout://a/mem://t/{id} alone", st.templates)
	}
}

func TestResolveResource(t *testing.T) {
	st := build(nil, []gateway.Surface{
		{Domain: "a", Listed: true, Resources: true, ResourceList: []*mcp.Resource{{URI: "file:///README.md"}, {URI: "a://only"}},
			TemplateList: []*mcp.ResourceTemplate{{URITemplate: "a://item/{id}"}, {URITemplate: "shared://{x}"}}},
		{Domain: "b", Listed: true, Resources: true, ResourceList: []*mcp.Resource{{URI: "file:///README.md"}},
			TemplateList: []*mcp.ResourceTemplate{{URITemplate: "shared://{x}"}}},
	}, false, slogDiscard())
	for _, tc := range []struct {
		name, uri, domain, origin string
		candidates                int
	}{
		{"listed", "toolscout://b/file:///README.md", "b", "file:///README.md", 0},
		{"template expanded", "toolscout://a/a://item/7", "a", "a://item/7", 0},
		{"unknown domain", "toolscout://zz/a://only", "", "", 0},
		{"raw, one upstream", "a://only", "a", "a://only", 0},
		{"raw, two upstreams", "file:///README.md", "", "", 2},
		{"raw, one template", "a://item/9", "a", "a://item/9", 0},
		{"raw, two templates", "shared://q", "", "", 2},
		{"raw, none", "none://x", "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, o, c := st.resolveResource(tc.uri)
			if d != tc.domain || o != tc.origin || len(c) != tc.candidates {
				t.Errorf("resolveResource(%q) = %q, %q, %v; want %q, %q, %d candidates", tc.uri, d, o, c, tc.domain, tc.origin, tc.candidates)
			}
		})
	}
}

func TestAdvertise(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		surfaces                      []gateway.Surface
		prompts, resources, subscribe bool
	}{
		{"none configured", nil, false, false, false},
		{"one not connected yet", []gateway.Surface{{Domain: "a"}}, true, true, true},
		{"tools only", []gateway.Surface{{Domain: "a", Listed: true}}, false, false, false},
		{"resources, no subscribe", []gateway.Surface{{Domain: "a", Listed: true, Resources: true}, {Domain: "b", Listed: true, Prompts: true}}, true, true, false},
		{"subscribe", []gateway.Surface{{Domain: "a", Listed: true, Resources: true, Subscribe: true}}, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, r, s, _ := advertise(tc.surfaces)
			if p != tc.prompts || r != tc.resources || s != tc.subscribe {
				t.Errorf("advertise = %v, %v, %v; want %v, %v, %v", p, r, s, tc.prompts, tc.resources, tc.subscribe)
			}
		})
	}
}

// TestPagination: an upstream's list of 2,500 resources, read from it in
// pages of 100, is listed in toolscout's pages with cursors.
func TestPagination(t *testing.T) {
	gw := gatewayOf(t, map[string]string{"big": upstream(t, &mcp.ServerOptions{PageSize: 100}, manyResources(2500))})
	s := New(Options{Source: gw.Surfaces(), Fetcher: gw.Surfaces()})
	cs := client(t, s, 1000)
	ctx := context.Background()
	first, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Resources) != 1000 || first.NextCursor == "" {
		t.Fatalf("first page: %d resources, cursor %q; want 1000 and a cursor", len(first.Resources), first.NextCursor)
	}
	n, seen := 0, map[string]bool{}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		seen[r.URI] = true
		n++
	}
	if n != 2500 || len(seen) != 2500 || !seen["toolscout://big/mem://r/02499"] {
		t.Errorf("listed %d resources (%d distinct), want the 2500", n, len(seen))
	}
}

// TestFloodBounded: an upstream that lists more than MaxSurfaceItems
// resources has the first MaxSurfaceItems listed, and says so.
func TestFloodBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("lists 10,500 resources")
	}
	gw := gatewayOf(t, map[string]string{"flood": upstream(t, &mcp.ServerOptions{PageSize: 2000}, manyResources(gateway.MaxSurfaceItems+500))})
	s := New(Options{Source: gw.Surfaces(), Fetcher: gw.Surfaces()})
	cs := client(t, s, 0)
	n := 0
	for _, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != gateway.MaxSurfaceItems {
		t.Errorf("listed %d resources, want %d", n, gateway.MaxSurfaceItems)
	}
	if cut := gw.Surfaces().List()[0].Cut; len(cut) != 1 || !strings.Contains(cut[0], "resources") {
		t.Errorf("Cut = %q, want the resources left out", cut)
	}
}

// TestTwoUpstreams: the same URI on two upstreams is two resources; a
// read of either goes to its own; the bare URI is ambiguous, and
// Visible hides a domain from lists and reads.
func TestTwoUpstreams(t *testing.T) {
	up := func(text string) string {
		return upstream(t, nil, func(srv *mcp.Server) {
			srv.AddResource(textResource("file:///README.md", text))
			srv.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "from " + text}}}}, nil
			})
		})
	}
	gw := gatewayOf(t, map[string]string{"a": up("a"), "b": up("b")})
	ctx := context.Background()

	cs := client(t, New(Options{Source: gw.Surfaces(), Fetcher: gw.Surfaces()}), 0)
	for _, d := range []string{"a", "b"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: WrapURI(d, "file:///README.md")})
		if err != nil || res.Contents[0].Text != d {
			t.Errorf("read of %s's README = %+v, %v; want %q", d, res, err, d)
		}
		p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: d + "__greet"})
		if err != nil || p.Messages[0].Content.(*mcp.TextContent).Text != "from "+d {
			t.Errorf("prompts/get %s__greet = %+v, %v", d, p, err)
		}
	}
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///README.md"})
	if code(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "toolscout://a/file:///README.md") || !strings.Contains(err.Error(), "toolscout://b/file:///README.md") {
		t.Errorf("read of the bare URI: %v; want invalid params naming both", err)
	}
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"})
	if code(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "a__greet, b__greet") {
		t.Errorf("get of the bare prompt name: %v; want invalid params naming both", err)
	}

	cs = clientWith(t, New(Options{Source: gw.Surfaces(), Fetcher: gw.Surfaces()}), 0, nil, hide{"b": true})
	rl, err := cs.ListResources(ctx, nil)
	if err != nil || len(rl.Resources) != 1 || rl.Resources[0].URI != WrapURI("a", "file:///README.md") || rl.CacheScope != "private" {
		t.Errorf("resources/list with b hidden = %+v, %v; want a's alone, private", rl, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: WrapURI("b", "file:///README.md")}); code(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("read of a hidden domain's resource: %v, want invalid params", err)
	}
	if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///README.md"}); err == nil {
		t.Errorf("read of the bare URI with b hidden = %+v; want an error (hidden candidates count as ambiguity only to who sees them)", res)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "b__greet"}); code(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("get of a hidden domain's prompt: %v, want invalid params", err)
	}
}

// TestCapabilities: initialize declares prompts and resources while an
// upstream may have them, and not once every upstream is known to have
// none; subscribe only when one can.
func TestCapabilities(t *testing.T) {
	toolsOnly := upstream(t, nil, func(srv *mcp.Server) {
		mcp.AddTool(srv, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	})
	resources := upstream(t, nil, func(srv *mcp.Server) { srv.AddResource(textResource("mem://x", "x")) })
	for _, tc := range []struct {
		name                 string
		ups                  map[string]string
		prompts, res, subscr bool
	}{
		{"tools only", map[string]string{"t": toolsOnly}, false, false, false},
		{"resources without subscriptions", map[string]string{"t": toolsOnly, "r": resources}, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := gatewayOf(t, tc.ups)
			cs := client(t, New(Options{Source: gw.Surfaces(), Fetcher: gw.Surfaces()}), 0)
			caps := cs.InitializeResult().Capabilities
			if (caps.Prompts != nil) != tc.prompts || (caps.Resources != nil) != tc.res || (caps.Resources != nil && caps.Resources.Subscribe) != tc.subscr {
				t.Errorf("capabilities: prompts %+v, resources %+v; want %v, %v (subscribe %v)", caps.Prompts, caps.Resources, tc.prompts, tc.res, tc.subscr)
			}
			if tc.res {
				err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: WrapURI("r", "mem://x")})
				if code(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "does not support subscriptions") {
					t.Errorf("subscribe on a server without subscriptions: %v, want invalid params saying so", err)
				}
			}
		})
	}
}

// hide is a Visibility that hides whole domains.
type hide map[string]bool

func (h hide) Visible(domain, _ string) bool { return !h[domain] }

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestUpstreamGone: a read or get whose server no longer answers is an
// internal error that says which server; a bare prompt name one server
// has works.
func TestUpstreamGone(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	srv.AddResource(textResource("mem://x", "x"))
	srv.AddPrompt(&mcp.Prompt{Name: "hello"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	gw := gatewayOf(t, map[string]string{"gone": hs.URL})
	cs := client(t, New(Options{Source: gw.Surfaces(), Fetcher: gw.Surfaces()}), 0)
	ctx := context.Background()
	if p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "hello"}); err != nil || len(p.Messages) != 1 {
		t.Errorf("prompts/get of the bare name one server has = %+v, %v", p, err)
	}
	hs.CloseClientConnections()
	hs.Close()
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: WrapURI("gone", "mem://x")})
	if code(err) != jsonrpc.CodeInternalError || !strings.Contains(err.Error(), `"gone"`) {
		t.Errorf("read from a server that is gone: %v, want an internal error naming it", err)
	}
}

// TestSubscriptionsBounded: subscriptions are bounded for all clients
// together; those of a session that ended without unsubscribing are
// forgotten, and the upstream's ended, when room is needed.
func TestSubscriptionsBounded(t *testing.T) {
	defer func(n int) { maxSubscriptions = n }(maxSubscriptions)
	maxSubscriptions = 3
	var mu sync.Mutex
	upSubs := map[string]bool{}
	url := upstream(t, &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			upSubs[req.Params.URI] = true
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			delete(upSubs, req.Params.URI)
			return nil
		},
	}, func(srv *mcp.Server) {
		srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://t/{id}", Name: "t"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "t"}}}, nil
		})
	})
	gw := gatewayOf(t, map[string]string{"s": url})
	s := New(Options{Source: gw.Surfaces(), Fetcher: gw.Surfaces()})
	ctx := context.Background()
	a := client(t, s, 0)
	for i := range 3 {
		if err := a.Subscribe(ctx, &mcp.SubscribeParams{URI: WrapURI("s", fmt.Sprintf("mem://t/%d", i))}); err != nil {
			t.Fatalf("subscribe %d: %v", i, err)
		}
	}
	err := a.Subscribe(ctx, &mcp.SubscribeParams{URI: WrapURI("s", "mem://t/9")})
	if code(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "the most it keeps") {
		t.Fatalf("a fourth subscription: %v, want invalid params saying the bound", err)
	}
	a.Close() // without unsubscribing
	b := client(t, s, 0)
	deadline := time.Now().Add(10 * time.Second)
	for {
		err = b.Subscribe(ctx, &mcp.SubscribeParams{URI: WrapURI("s", "mem://t/9")})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the session's end is asynchronous
	}
	if err != nil {
		t.Fatalf("subscribe after the first client left: %v", err)
	}
	for {
		mu.Lock()
		n, has := len(upSubs), upSubs["mem://t/9"]
		mu.Unlock()
		if n == 1 && has {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("upstream subscriptions = %d (mem://t/9: %v), want the new one alone", n, has)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestResubscribeAfterRestart: a subscription outlives a restart of its
// server: toolscout subscribes again on the new session, and the new
// server's updates reach the client.
func TestResubscribeAfterRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	subscribed := make(chan *mcp.Server, 4)
	serve := func(ln net.Listener) *http.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, &mcp.ServerOptions{
			SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
		// Told once the go-sdk has recorded the subscription, not from
		// the SubscribeHandler: the go-sdk records it after the handler
		// returns, and an update sent in between reaches no session.
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if method == "resources/subscribe" && err == nil {
					subscribed <- srv
				}
				return res, err
			}
		})
		srv.AddResource(textResource("mem://x", "x"))
		hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
		go hs.Serve(ln)
		return hs
	}
	first := serve(ln)
	gw := gateway.New(gateway.Options{Upstreams: []gateway.UpstreamConfig{{Domain: "r", URL: "http://" + addr, Transport: "http"}},
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gw.Start(ctx)
	defer gw.Close()
	gw.WaitReady(ctx)
	updated := make(chan string, 4)
	c := clientWith(t, New(Options{Source: gw.Surfaces(), Fetcher: gw.Surfaces()}), 0, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
	}, nil)
	uri := WrapURI("r", "mem://x")
	if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	<-subscribed
	first.Close() // the server stops, and starts again on the same address
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	second := serve(ln2)
	defer second.Close()
	var up *mcp.Server
	select {
	case up = <-subscribed:
	case <-ctx.Done():
		t.Fatal("the restarted server was not subscribed to again")
	}
	if err := up.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "mem://x"}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-updated:
		if got != uri {
			t.Errorf("update for %s, want %s", got, uri)
		}
	case <-ctx.Done():
		t.Fatal("the restarted server's update did not reach the client")
	}
}

// TestPromptListChanged: a prompt the server adds is announced to the
// client (prompts/list_changed) and listed; one it removes goes.
func TestPromptListChanged(t *testing.T) {
	var up *mcp.Server
	url := upstream(t, nil, func(srv *mcp.Server) {
		up = srv
		srv.AddPrompt(&mcp.Prompt{Name: "old"}, nil)
	})
	gw := gatewayOf(t, map[string]string{"p": url})
	changed := make(chan struct{}, 8)
	cs := clientWith(t, New(Options{Source: gw.Surfaces(), Fetcher: gw.Surfaces()}), 0, &mcp.ClientOptions{
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { changed <- struct{}{} },
	}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up.AddPrompt(&mcp.Prompt{Name: "new"}, nil)
	up.RemovePrompts("old")
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("no prompts/list_changed")
		}
		pl, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(pl.Prompts) == 1 && pl.Prompts[0].Name == "p__new" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("prompts/list = %+v, want p__new alone", pl.Prompts)
		}
	}
}

// TestBuildOwnNames: with own names, a prompt is listed under its
// upstream's name where no other upstream has one of that name (and no
// prompt is listed as that name by domain__name), as domain__name
// otherwise; without, every prompt is domain__name. Each listed name gets
// its upstream's prompt, and a shared own name resolves to the candidates.
func TestBuildOwnNames(t *testing.T) {
	surfaces := []gateway.Surface{
		{Domain: "a", Listed: true, Prompts: true, PromptList: []*mcp.Prompt{{Name: "review"}, {Name: "summarize"}, {Name: "b__x"}}},
		{Domain: "b", Listed: true, Prompts: true, PromptList: []*mcp.Prompt{{Name: "review"}, {Name: "x"}}},
	}
	for _, tc := range []struct {
		name string
		own  bool
		want []string
	}{
		{"own", true, []string{"a__b__x", "a__review", "b__review", "summarize", "x"}},
		{"qualified", false, []string{"a__b__x", "a__review", "a__summarize", "b__review", "b__x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := build(nil, surfaces, tc.own, slogDiscard())
			var got []string
			for name, e := range st.prompts {
				got = append(got, name)
				if e.listed.Name != name || e.origin == "" {
					t.Errorf("prompt %s: listed as %q, origin %q", name, e.listed.Name, e.origin)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("prompts = %v, want %v", got, tc.want)
			}
			if e, _ := st.resolvePrompt("summarize"); e == nil || e.domain != "a" {
				t.Errorf("resolvePrompt(summarize) = %v, want a's", e)
			}
			if e, c := st.resolvePrompt("review"); e != nil || len(c) != 2 {
				t.Errorf("resolvePrompt(review) = %v, %v; want the two candidates", e, c)
			}
		})
	}
}
