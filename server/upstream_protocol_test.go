package server

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// TestGatewayStatelessUpstream: an upstream that speaks only the stateless
// protocol (a go-sdk server restricted to it) works through the gateway:
// tools listed, calls run, and its tools/list_changed (on a
// subscriptions/listen stream) re-lists it. Every request the gateway
// sends it is of that protocol.
func TestGatewayStatelessUpstream(t *testing.T) {
	t.Parallel()
	up := shoutServer("new-only", &mcp.ServerOptions{SupportedProtocolVersions: []string{StatelessProtocol}})
	var mu sync.Mutex
	seen := map[string]int{} // protocol header → requests
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Mcp-Protocol-Version")]++
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "new", URL: hs.URL, ConnectTimeout: 10 * time.Second}}, Exposure{Mode: ExposeMeta})
	checkShout(t, env, "new")
	mcp.AddTool(up, &mcp.Tool{Name: "whisper", Description: "Lower-case a word."}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	waitFor(t, "the tool added upstream", func() bool { return env.hasTool("new__whisper") })
	mu.Lock()
	defer mu.Unlock()
	for v, n := range seen {
		if v != StatelessProtocol {
			t.Errorf("%d requests of protocol %q reached the upstream, want only %s", n, v, StatelessProtocol)
		}
	}
}

// TestGatewayUpstreamRefusesDiscover: a server of the older protocol that
// does not understand server/discover still connects at 2025-11-25,
// whether it refuses it with a bare 400 (the go-sdk client then falls back
// to initialize itself) or acknowledges it with 202 and no JSON (which
// ends the client's connection: the gateway connects again, at
// 2025-11-25).
func TestGatewayUpstreamRefusesDiscover(t *testing.T) {
	t.Parallel()
	up := shoutServer("old", nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)
	for _, tc := range []struct {
		name   string
		status int
	}{
		{"bare 400", http.StatusBadRequest},
		{"202 without JSON", http.StatusAccepted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refused atomic.Int32
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Mcp-Protocol-Version") >= StatelessProtocol {
					refused.Add(1)
					http.Error(w, "what is this?", tc.status)
					return
				}
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(hs.Close)
			env := startGateway(t, []gateway.UpstreamConfig{{Domain: "old", URL: hs.URL, Transport: "http", ConnectTimeout: 10 * time.Second}}, Exposure{Mode: ExposeMeta})
			checkShout(t, env, "old")
			if refused.Load() == 0 {
				t.Error("the gateway never asked for the stateless protocol")
			}
		})
	}
}

// TestGatewayUnreachableHTTPUpstream: a server that cannot be reached is
// tried once per transport, not once more at the older protocol.
func TestGatewayUnreachableHTTPUpstream(t *testing.T) {
	// Not parallel: the port it found free must stay free.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "gone", URL: url, ConnectTimeout: 5 * time.Second}}, Exposure{Mode: ExposeMeta})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	env.gw.WaitReady(ctx)
	st := env.gw.Upstreams().Status()[0]
	if st.State != "down" || st.Err == nil || strings.Count(st.Err.Error(), "connection refused") != 2 {
		t.Errorf("status %s %v, want down with two refused connections (Streamable HTTP, SSE)", st.State, st.Err)
	}
}
