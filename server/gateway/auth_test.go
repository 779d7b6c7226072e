package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
)

// authUpstream serves an MCP server with one tool over Streamable HTTP,
// answering 401 to a request whose Authorization is not "Bearer " +
// *want.
func authUpstream(t *testing.T, want *atomic.Value) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ping", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+want.Load().(string) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="remote"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestUpstreamUnauthorized: an upstream that refuses toolscout's
// credentials, at connect or later at a call, is named with its 401 and
// what to check, not an SDK's transport error.
func TestUpstreamUnauthorized(t *testing.T) {
	var want atomic.Value
	want.Store("good-token")
	url := authUpstream(t, &want)
	ctx := t.Context()

	// Refused at connect.
	bad := New(Options{Upstreams: []UpstreamConfig{{Domain: "remote", URL: url, Transport: "http", Headers: map[string]string{"Authorization": "Bearer wrong"}, ConnectTimeout: 5 * time.Second}}})
	bad.Start(ctx)
	t.Cleanup(bad.Close)
	bad.WaitReady(ctx)
	st := bad.Status()[0]
	if st.State == "up" || st.Err == nil || !strings.Contains(st.Err.Error(), "401") || !strings.Contains(st.Err.Error(), "credentials") {
		t.Errorf("status = %s %v, want down with a 401 that names the credentials", st.State, st.Err)
	}

	// Refused at a call, once the upstream no longer takes the token.
	good := New(Options{Upstreams: []UpstreamConfig{{Domain: "remote", URL: url, Transport: "http", Headers: map[string]string{"Authorization": "Bearer good-token"}, ConnectTimeout: 5 * time.Second}}})
	good.Start(ctx)
	t.Cleanup(good.Close)
	good.WaitReady(ctx)
	if st := good.Status()[0]; st.State != "up" {
		t.Fatalf("status = %s %v, want up", st.State, st.Err)
	}
	tool := &index.Tool{Domain: "remote", Name: "ping", QualifiedName: "remote__ping"}
	if _, err := good.Execute(ctx, &mcp.CallToolRequest{}, tool, map[string]any{}); err != nil {
		t.Fatalf("ping: %v", err)
	}
	want.Store("rotated-token")
	_, err := good.Execute(ctx, &mcp.CallToolRequest{}, tool, map[string]any{})
	if err == nil || !strings.Contains(err.Error(), `"remote"`) || !strings.Contains(err.Error(), "401") || !errors.Is(err, ErrUnauthorized) {
		t.Errorf("ping after the upstream's token changed: %v, want an ErrUnauthorized naming remote and its 401", err)
	}
}
