package gateway

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/logtest"
)

// TestSurfaceCallFailures: a prompt asked of a server that exits while
// answering fails as stopped, and one that takes longer than the
// server's timeout as timed out, each worded for what was asked; the
// server is restarted and serves again.
func TestSurfaceCallFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The timeout is short for one server only: the other's crash must
	// not be taken for a timeout on a loaded machine.
	quick := testUpstream(t, "quick", "")
	quick.Timeout = 200 * time.Millisecond
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{quick, testUpstream(t, "test", dir)}})
	g.WaitReady(context.Background())
	ctx := context.Background()
	_, err := g.Surfaces().GetPrompt(ctx, "quick", &mcp.GetPromptParams{Name: "slow"})
	if !errors.Is(err, ErrTimeout) || err.Error() != `server "quick" did not answer prompts/get within 200ms (its timeout)` {
		t.Errorf("a slow prompt = %v, want ErrTimeout worded for prompts/get", err)
	}
	_, err = g.Surfaces().GetPrompt(ctx, "test", &mcp.GetPromptParams{Name: "crash"})
	if !errors.Is(err, ErrStopped) || !strings.HasPrefix(err.Error(), `server "test" stopped during prompts/get (`) {
		t.Errorf("a prompt whose server exits = %v, want ErrStopped worded for prompts/get", err)
	}
	waitUntil(t, g, "the restart", func() bool { return starts(t, dir) >= 2 && stateOf(g, "test").State == "up" })
	r, err := g.Surfaces().ReadResource(ctx, "test", &mcp.ReadResourceParams{URI: "test://hello"})
	if err != nil || r.Contents[0].Text == "hello from start 1" {
		t.Errorf("ReadResource after the restart = %+v, %v; want a later start's", r, err)
	}
}

// TestBareServer: a server of tools only has a listed surface without
// prompts or resources, and refuses a subscription without asking it.
func TestBareServer(t *testing.T) {
	t.Parallel()
	cfg := testUpstream(t, "bare", "")
	cfg.Env[upstreamBareEnv] = "1"
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{cfg}})
	g.WaitReady(context.Background())
	s := surfaceOf(g, "bare")
	if !s.Listed || s.Prompts || s.Resources || s.Subscribe || s.Completions || s.PromptList != nil || s.ResourceList != nil {
		t.Errorf("surface = %+v, want listed, with nothing", s)
	}
	if err := g.Surfaces().SubscribeResource(context.Background(), "bare", "x://y"); !errors.Is(err, ErrNoSubscriptions) {
		t.Errorf("SubscribeResource = %v, want ErrNoSubscriptions", err)
	}
	if err := g.Surfaces().UnsubscribeResource(context.Background(), "bare", "x://y"); err != nil {
		t.Errorf("UnsubscribeResource of nothing subscribed = %v, want nil", err)
	}
	if got := g.Directory().Titles()["bare"]; got != "bare" {
		t.Errorf("title = %q, want the server's name when it gives no title", got)
	}
	if got, ok := g.Directory().Instructions()["bare"]; ok {
		t.Errorf("Instructions()[bare] = %q, want none: the server gives none", got)
	}
}

// TestConnectTimeout: a server that does not answer within its connect
// timeout is down, saying so, and its process is stopped.
func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	cfg := testUpstream(t, "test", "")
	cfg.Env[upstreamDelayEnv] = "60000"
	cfg.ConnectTimeout = 200 * time.Millisecond
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{cfg}, MinBackoff: time.Hour})
	g.WaitReady(context.Background())
	st := stateOf(g, "test")
	if st.State != "down" || st.Err == nil || !strings.Contains(st.Err.Error(), "no answer within 200ms (connect and list tools)") {
		t.Errorf("Status = %+v, want down, saying it did not answer within its connect timeout", st)
	}
}

// TestDownServerKeepsLastRun: the tools a server listed on the last run
// stay served while it cannot start (discoverable), and calls of them
// say it is unavailable and why.
func TestDownServerKeepsLastRun(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{{Domain: "test", Command: "/nonexistent/server"}}, Known: lastRun(), MinBackoff: time.Hour})
	g.WaitReady(context.Background())
	if names := toolNames(g, "test"); !sameSet(names, []string{"echo", "gone"}) {
		t.Errorf("tools of the down server = %q, want the last run's", names)
	}
	_, err := call(g, "test", "echo", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "/nonexistent/server") {
		t.Errorf("echo = %v, want ErrUnavailable with the reason", err)
	}
}

// TestUnreachableHTTPServer: a remote server that cannot be reached is
// down with the dial error, asked once per transport (not again with an
// older protocol).
func TestUnreachableHTTPServer(t *testing.T) {
	t.Parallel()
	var log logtest.Buffer
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{{Domain: "web", URL: "http://127.0.0.1:1/mcp", ConnectTimeout: 10 * time.Second}},
		MinBackoff: time.Hour, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	g.WaitReady(context.Background())
	st := stateOf(g, "web")
	if st.State != "down" || st.Err == nil || !strings.Contains(st.Err.Error(), "connection refused") {
		t.Errorf("Status = %+v, want down with the dial error", st)
	}
	if n := strings.Count(st.Err.Error(), "connection refused"); n > 2 {
		t.Errorf("the error says connection refused %d times, want once per transport (Streamable HTTP, SSE): %v", n, st.Err)
	}
}

// TestLogMessagesReachTheCaller: a log message a server sends during a
// call reaches the client of the call, its logger named after the
// server.
func TestLogMessagesReachTheCaller(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	g.WaitReady(context.Background())
	got := make(chan *mcp.LoggingMessageParams, 4)
	alice := newFrontWith(t, g, "alice", "2025-11-25", func(o *mcp.ClientOptions) {
		o.LoggingMessageHandler = func(_ context.Context, req *mcp.LoggingMessageRequest) { got <- req.Params }
	})
	if err := alice.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if res := alice.run(t, "log", nil); res != "logged" {
		t.Fatalf("log = %q", res)
	}
	select {
	case p := <-got:
		if p.Logger != "test/notes" || p.Data != "a note" || p.Level != "warning" {
			t.Errorf("alice got %+v, want the note from test/notes", p)
		}
	case <-time.After(time.Minute):
		t.Fatal("alice got no log message")
	}
}
