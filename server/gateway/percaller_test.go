package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
)

// TestCallerSessionsBoundedAndIdle: an upstream acting with its
// callers' identity keeps at most its bound of caller sessions (the
// least recently used idle one is closed to make room, on the server
// too), closes one that stays idle, and refuses a call without a
// caller token before anything is sent.
func TestCallerSessionsBoundedAndIdle(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "user " + strings.TrimPrefix(req.Extra.Header.Get("Authorization"), "Bearer tok-")}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(h)
	// A session left open (a bug here) must fail the test, not hang it.
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	serverSessions := func() int {
		n := 0
		for range s.Sessions() {
			n++
		}
		return n
	}
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{{Domain: "remote", URL: hs.URL, Transport: "http", CallerIdentity: IdentityForward,
		Headers: map[string]string{"Authorization": "Bearer shared"}, ConnectTimeout: 10 * time.Second}}})
	g.WaitReady(t.Context())
	u := g.fleet.byDom["remote"]
	u.callers.mu.Lock()
	u.callers.max, u.callers.idle = 2, time.Hour
	u.callers.mu.Unlock()
	tool := &index.Tool{Domain: "remote", Name: "whoami", QualifiedName: "remote__whoami"}
	as := func(tok string) (string, error) {
		req := &mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: http.Header{}}}
		if tok != "" {
			req.Extra.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := g.Execute(t.Context(), req, tool, map[string]any{})
		if err != nil {
			return "", err
		}
		return resultText(res), nil
	}
	if _, err := as(""); err == nil || !strings.Contains(err.Error(), "came without a bearer token") {
		t.Errorf("a call without a caller token: %v, want it refused", err)
	}
	for _, tok := range []string{"tok-a", "tok-b", "tok-c"} {
		if got, err := as(tok); err != nil || got != "user "+strings.TrimPrefix(tok, "tok-") {
			t.Fatalf("call as %s: %q %v, want it made with its own token", tok, got, err)
		}
	}
	if n := u.callers.count(); n != 2 {
		t.Errorf("caller sessions after three callers with a bound of 2: %d, want 2", n)
	}
	waitUntil(t, g, "the evicted caller's session closed on the server", func() bool { return serverSessions() == 3 }) // shared + b + c
	// Idle: a session with no call for the idle time is closed.
	u.callers.mu.Lock()
	u.callers.idle = time.Millisecond
	u.callers.mu.Unlock()
	if _, err := as("tok-d"); err != nil { // evicts b, the least recently used
		t.Fatal(err)
	}
	waitUntil(t, g, "the idle caller's session closed", func() bool { return u.callers.count() == 1 }) // c, whose idle timer is an hour
	waitUntil(t, g, "the idle caller's session closed on the server", func() bool { return serverSessions() == 2 })
}
