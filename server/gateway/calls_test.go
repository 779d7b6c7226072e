package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
)

// front is a client of toolscout's: a go-sdk server whose tool "run"
// runs a tool of the gateway's upstream "test" through Execute with the
// client's request (as package server's execute_tool does), and the
// go-sdk client connected to it, which samples, has a root and notes
// the progress it is told.
type front struct {
	cs       *mcp.ClientSession
	ss       *mcp.ServerSession // toolscout's side of the client's session
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
}

func newFront(t *testing.T, g *Gateway, name string) *front { return newFrontOf(t, g, name, "") }

// newFrontOf is newFront with the protocol version the client asks for
// ("": the go-sdk's newest, 2026-07-28, whose client cannot be asked in
// the middle of a request but through a bridge: bridge.go).
func newFrontOf(t *testing.T, g *Gateway, name, protocol string) *front {
	return newFrontWith(t, g, name, protocol, nil)
}

// newFrontWith is newFrontOf with more client options set by opt.
func newFrontWith(t *testing.T, g *Gateway, name, protocol string, opt func(*mcp.ClientOptions)) *front {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "toolscout-front", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "run", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"tool": map[string]any{"type": "string"}, "args": map[string]any{"type": "object"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Tool string
				Args map[string]any
			}
			if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
				return nil, err
			}
			res, err := g.Execute(ctx, req, &index.Tool{Domain: "test", Name: a.Tool, QualifiedName: index.QualifiedName("test", a.Tool)}, a.Args)
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			return res, nil
		})
	f := &front{}
	o := &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "hi from " + name}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			f.mu.Lock()
			f.progress = append(f.progress, req.Params)
			f.mu.Unlock()
		},
	}
	if opt != nil {
		opt(o)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, o)
	client.AddRoots(&mcp.Root{URI: "file:///home/" + name, Name: name})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.ss = ss
	f.cs, err = client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.cs.Close()
		ss.Close()
	})
	return f
}

// run calls tool of the upstream through the front, with a progress
// token when token is not nil.
func (f *front) run(t *testing.T, tool string, token any) string {
	t.Helper()
	return f.runCtx(context.Background(), t, tool, nil, token)
}

// runCtx is run with ctx and the tool's arguments.
func (f *front) runCtx(ctx context.Context, t *testing.T, tool string, args map[string]any, token any) string {
	t.Helper()
	p := &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"tool": tool, "args": args}}
	if token != nil {
		p.SetProgressToken(token)
	}
	res, err := f.cs.CallTool(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err().Error()
		}
		t.Fatalf("run %s: %v", tool, err)
	}
	return resultText(res)
}

// httpUpstream serves the test upstream's server over Streamable HTTP.
func httpUpstream(t *testing.T) UpstreamConfig {
	t.Helper()
	srv := newTestServer(1, "Echoes the text it is given.")
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return UpstreamConfig{Domain: "test", URL: ts.URL, ConnectTimeout: testUpstream(t, "x", "").ConnectTimeout, Timeout: testUpstream(t, "x", "").Timeout}
}

// TestClientRequestsReachTheCaller: what an upstream asks of its client
// in the middle of a call (sampling, roots) is asked of the client that
// made the call, and the progress it tells reaches that client under
// the client's own token, over stdio and over Streamable HTTP.
func TestClientRequestsReachTheCaller(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		cfg      func(t *testing.T) UpstreamConfig
		protocol string // the client's
	}{
		{"stdio", func(t *testing.T) UpstreamConfig { return testUpstream(t, "test", "") }, ""},
		{"stdio, client of 2025-11-25", func(t *testing.T) UpstreamConfig { return testUpstream(t, "test", "") }, "2025-11-25"},
		{"http", httpUpstream, ""},
		{"http, client of 2025-11-25", httpUpstream, "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateway(t, Options{Upstreams: []UpstreamConfig{tc.cfg(t)}})
			g.WaitReady(context.Background())
			if st := stateOf(g, "test"); st.State != "up" {
				t.Fatalf("upstream %+v", st)
			}
			alice := newFrontOf(t, g, "alice", tc.protocol)
			if got := alice.run(t, "ask", nil); got != "the client said: hi from alice" {
				t.Errorf("ask = %q, want alice's sampling", got)
			}
			if got := alice.run(t, "roots", nil); got != "roots: file:///home/alice" {
				t.Errorf("roots = %q, want alice's root", got)
			}
			if got := alice.run(t, "progress", "alice-token"); got != "progress token given: true" {
				t.Errorf("progress = %q", got)
			}
			// The client's handler runs beside the call's result: wait
			// for the two notifications the gateway sent before it.
			waitUntil(t, g, "alice's progress", func() bool {
				alice.mu.Lock()
				defer alice.mu.Unlock()
				return len(alice.progress) >= 2
			})
			alice.mu.Lock()
			defer alice.mu.Unlock()
			if len(alice.progress) != 2 {
				t.Fatalf("alice was told %d progress notifications, want 2", len(alice.progress))
			}
			for i, p := range alice.progress {
				if p.ProgressToken != "alice-token" || p.Message != []string{"step 1", "step 2"}[i] {
					t.Errorf("progress %d = token %v, %q; want alice's token and the server's message", i, p.ProgressToken, p.Message)
				}
			}
		})
	}
}

// TestClientRequestsWithoutACaller: a call of toolscout's own (no client
// session) is given no progress token, and what the upstream asks of a
// client then is refused saying why, not sent to some client.
func TestClientRequestsWithoutACaller(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	g.WaitReady(context.Background())
	_ = newFront(t, g, "bystander") // a client that must not be asked
	res, err := call(g, "test", "ask", nil)
	if err != nil || !res.IsError || !strings.Contains(resultText(res), `toolscout cannot pass sampling/createMessage from server "test" to a client`) {
		t.Errorf("ask without a caller = %q, %v; want the request refused saying why", resultText(res), err)
	}
	res, err = call(g, "test", "progress", nil)
	if err != nil || resultText(res) != "progress token given: false" {
		t.Errorf("progress without a caller = %q, %v; want no token sent", resultText(res), err)
	}
}

// TestElicitationReachesTheCaller: a server's elicitation in the middle
// of a call is answered by the client of the call, whether it can be
// asked in the middle of a request (2025-11-25) or only by an
// input-required result it answers on a retry (2026-07-28: a bridge); a
// client that declared no elicitation is refused as the go-sdk refuses
// it, and the server hears why.
func TestElicitationReachesTheCaller(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	g.WaitReady(context.Background())
	answering := func(name string) func(*mcp.ClientOptions) {
		return func(o *mcp.ClientOptions) {
			o.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if req.Params.Message != "Your name?" {
					return &mcp.ElicitResult{Action: "decline"}, nil
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
			}
		}
	}
	for _, tc := range []struct {
		name, protocol string
		opt            func(*mcp.ClientOptions)
		want           string
	}{
		{"2025-11-25", "2025-11-25", answering("alice"), "accept: alice"},
		{"2026-07-28 through a bridge", "", answering("bob"), "accept: bob"},
		{"no elicitation declared", "2025-11-25", nil, "elicitation failed: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFrontWith(t, g, "client", tc.protocol, tc.opt)
			if got := f.run(t, "elicit", nil); !strings.HasPrefix(got, tc.want) {
				t.Errorf("elicit = %q, want %q", got, tc.want)
			}
		})
	}
	g.env.bridges.mu.Lock()
	defer g.env.bridges.mu.Unlock()
	if n := len(g.env.bridges.byID); n != 0 {
		t.Errorf("%d bridges left after the calls ended", n)
	}
}
