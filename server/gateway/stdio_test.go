package gateway

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/logtest"
	"github.com/toolscout/toolscout/internal/redact"
)

// TestStdioBannerSkipped: a line a stdio server prints on stdout that is
// not JSON-RPC is skipped and logged, and the server serves.
func TestStdioBannerSkipped(t *testing.T) {
	t.Parallel()
	var log logtest.Buffer
	cfg := testUpstream(t, "test", "")
	cfg.Env[upstreamBannerEnv] = "Test server v1 listening on stdio"
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{cfg}, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	g.WaitReady(context.Background())
	if res, err := call(g, "test", "echo", map[string]any{"text": "x"}); err != nil || !strings.HasPrefix(resultText(res), "echo: x") {
		t.Fatalf("echo after a banner = %q, %v", resultText(res), err)
	}
	if !strings.Contains(log.String(), "not JSON-RPC; skipped") || !strings.Contains(log.String(), "listening on stdio") {
		t.Errorf("log = %s, want the banner said skipped", log.String())
	}
}

// TestStdioMessageOverTheLimit: an answer over Options.MaxMessage fails
// its call saying so, and the session goes on: the next call runs on the
// same process.
func TestStdioMessageOverTheLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", dir)}, MaxMessage: 64 << 10})
	g.WaitReady(context.Background())
	if res, err := call(g, "test", "big", map[string]any{"n": 1000}); err != nil || len(resultText(res)) != 1000 {
		t.Fatalf("a small answer = %d bytes, %v", len(resultText(res)), err)
	}
	_, err := call(g, "test", "big", map[string]any{"n": 200 << 10})
	if err == nil || !strings.Contains(err.Error(), "over the 65536 toolscout accepts in one message") {
		t.Fatalf("an answer over the limit = %v, want an error saying so", err)
	}
	if res, err := call(g, "test", "echo", map[string]any{"text": "after"}); err != nil || resultText(res) != "echo: after (start 1)" {
		t.Errorf("echo after the large answer = %q, %v; want it on the same process", resultText(res), err)
	}
	if n := starts(t, dir); n != 1 {
		t.Errorf("the server was started %d times, want once", n)
	}
}

// TestStdioTwoClients: over stdio nothing says which call a server's
// request belongs to: while calls of two clients run on the server, its
// request is refused saying why, never sent to either client.
func TestStdioTwoClients(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", dir)}})
	g.WaitReady(context.Background())
	alice, bob := newFront(t, g, "alice"), newFront(t, g, "bob")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan string, 1)
	go func() { done <- alice.runCtx(ctx, t, "slow", map[string]any{"ms": 60000}, nil) }()
	for {
		if _, err := os.Stat(filepath.Join(dir, "slow")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := bob.run(t, "ask", nil)
	if !strings.Contains(got, "calls of several clients are running on its one connection") {
		t.Errorf("bob's ask while alice's call runs = %q, want it refused saying why", got)
	}
	cancel()
	recv(t, done, "alice's cancelled call")
	// alice's client returns at its cancel; the gateway ends her call
	// when the notifications/cancelled it sends arrives.
	waitCallsEnded(t, g, "test")
	if got := bob.run(t, "ask", nil); got != "the client said: hi from bob" {
		t.Errorf("bob's ask alone = %q, want bob's sampling", got)
	}
}

// TestPromptForAClient: a prompt got for a client (WithClient) is a call
// of that client's: what the server asks meanwhile is asked of it; got
// for none, the server's request is refused.
func TestPromptForAClient(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	g.WaitReady(context.Background())
	alice := newFrontOf(t, g, "alice", "2025-11-25") // asked in the middle of a request
	res, err := g.Surfaces().GetPrompt(WithClient(context.Background(), alice.ss), "test", &mcp.GetPromptParams{Name: "ask"})
	if err != nil || res.Messages[0].Content.(*mcp.TextContent).Text != "hi from alice" {
		t.Fatalf("GetPrompt(ask) for alice = %+v, %v; want alice's sampling", res, err)
	}
	g.env.routes.mu.Lock()
	left := len(g.env.routes.byID)
	g.env.routes.mu.Unlock()
	if left != 0 {
		t.Errorf("%d routes left after the prompt was got", left)
	}
	if WithClient(context.Background(), nil) != context.Background() {
		t.Error("WithClient(nil) changed the context")
	}
	if _, err := g.Surfaces().GetPrompt(context.Background(), "test", &mcp.GetPromptParams{Name: "ask"}); err == nil || !strings.Contains(err.Error(), "toolscout cannot pass sampling/createMessage") {
		t.Errorf("GetPrompt(ask) for no client = %v, want the sampling refused", err)
	}
}

// TestListingRedacted: a secret in what a server lists (a tool's
// description) or answers (a prompt) is redacted before it is served.
func TestListingRedacted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "desc"), []byte("Echoes; token s3cret-value inside."), 0o644); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", dir)}, Redactor: redact.New("s3cret-value")})
	g.WaitReady(context.Background())
	if d := echoDescription(g); strings.Contains(d, "s3cret-value") || !strings.HasPrefix(d, "Echoes; token ") {
		t.Errorf("echo's served description = %q, want the secret redacted", d)
	}
	p, err := g.Surfaces().GetPrompt(context.Background(), "test", &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "s3cret-value"}})
	if err != nil || strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "s3cret-value") {
		t.Errorf("GetPrompt = %+v, %v; want the secret redacted", p, err)
	}
}

// TestSkippedToolReported: a tool the catalog cannot take (white space
// in its name) is left out, not the server, and Status says why.
func TestSkippedToolReported(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	g.WaitReady(context.Background())
	if _, err := call(g, "test", "add_tool", map[string]any{"name": "bad name"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, g, "the skipped tool reported", func() bool { return len(stateOf(g, "test").Skipped) > 0 })
	st := stateOf(g, "test")
	if !strings.Contains(st.Skipped[0], `invalid tool name "bad name"`) || slices.Contains(toolNames(g, "test"), "bad name") {
		t.Errorf("Status.Skipped = %q, tools %q; want bad name skipped and said", st.Skipped, toolNames(g, "test"))
	}
	if st.State != "up" || st.Latency <= 0 {
		t.Errorf("Status = %+v, want up with its connect latency", st)
	}
}

// TestConcurrentCalls: calls made at once on one server all run, each
// answered with its own result, and leave no route behind.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	g.WaitReady(context.Background())
	alice := newFront(t, g, "alice")
	const n = 16
	errs := make(chan string, n)
	for i := range n {
		go func() {
			text := "call " + string(rune('a'+i))
			res, err := call(g, "test", "echo", map[string]any{"text": text})
			if err != nil || resultText(res) != "echo: "+text+" (start 1)" {
				errs <- resultText(res) + " " + errString(err)
				return
			}
			errs <- ""
		}()
	}
	for range n {
		if e := <-errs; e != "" {
			t.Errorf("a concurrent call answered %q", e)
		}
	}
	if got := alice.run(t, "echo", nil); !strings.HasPrefix(got, "echo: ") {
		t.Errorf("alice's call after them = %q", got)
	}
	g.env.routes.mu.Lock()
	defer g.env.routes.mu.Unlock()
	if len(g.env.routes.byID) != 0 || len(g.env.routes.inflight["test"]) != 0 {
		t.Errorf("%d routes left after the calls ended", len(g.env.routes.byID))
	}
}

// waitCallsEnded waits until no call of a client runs on domain's server.
func waitCallsEnded(t *testing.T, g *Gateway, domain string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		g.env.routes.mu.Lock()
		n := len(g.env.routes.inflight[domain])
		g.env.routes.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls still running on %s a minute later", n, domain)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestCloseWhileConnecting: Close while a server is still starting
// returns, and stops it; a call waiting for it ends.
func TestCloseWhileConnecting(t *testing.T) {
	t.Parallel()
	cfg := testUpstream(t, "test", "")
	cfg.Env[upstreamDelayEnv] = "60000"
	g := New(Options{Upstreams: []UpstreamConfig{cfg}, Known: lastRun()})
	g.Start(context.Background())
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := g.Execute(ctx, nil, testTool("echo"), nil)
		done <- err
	}()
	g.Close()
	cancel()
	if err := recv(t, done, "the call waiting at Close"); err == nil {
		t.Error("the call waiting for the server succeeded after Close")
	}
	select {
	case <-g.Upstreams().Started("test"):
	default:
		t.Error("Started(test) is not closed after Close: waits on it would hang")
	}
}
