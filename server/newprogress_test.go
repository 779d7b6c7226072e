package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// progressUpstream is a go-sdk server over stateless HTTP (2026-07-28)
// whose tool "work" reports three steps of progress under the token its
// call carries (none when it carries none), as the go-sdk's conformance
// fixture does.
func progressUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "progress", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "work", Description: "Work in three steps.", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; tok != nil && i <= 3; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done, token %v", tok != nil)}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestProgressNewProtocolUpstream: the progress of a call to an upstream
// of 2026-07-28 reaches the client under its own token, over both
// protocol generations of the client: the token toolscout gives the
// upstream travels in the same _meta as the client's capabilities and
// log level (which once replaced it: the upstream saw no token and sent
// no progress).
func TestProgressNewProtocolUpstream(t *testing.T) {
	t.Parallel()
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "progress", URL: progressUpstream(t)}}, Exposure{Mode: ExposeEager})
	waitFor(t, "progress__work", func() bool { return env.hasTool("progress__work") })
	hs := httptest.NewServer(env.srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	for _, protocol := range []string{StatelessProtocol, "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var mu sync.Mutex
			var got []any
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "watcher", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					got = append(got, req.Params.ProgressToken)
					mu.Unlock()
				},
			}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "progress__work", Meta: mcp.Meta{"progressToken": "mine"}})
			if err != nil || text(res) != "done, token true" {
				t.Fatalf("progress__work = %v, %v; want the upstream's result after it was given a token", res, err)
			}
			// The go-sdk client hands notifications to their handler on
			// goroutines of their own: wait for them (up to the test's
			// minute).
			for {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n >= 3 || ctx.Err() != nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 3 {
				t.Fatalf("progress notifications = %v, want 3", got)
			}
			for _, tok := range got {
				if tok != "mine" {
					t.Errorf("progress token %v, want the client's own, mine", tok)
				}
			}
		})
	}
}
