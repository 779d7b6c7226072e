package server

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMaxSessions(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, nil)})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{MaxSessions: 2}))
	t.Cleanup(hs.Close)
	connect := func() (*mcp.ClientSession, error) {
		return mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, sessionOpts)
	}
	// Sessions end asynchronously after the client's DELETE, so a new one
	// may need a moment: retry, and close every session before hs.Close
	// (which waits for their streams).
	connectSoon := func() (*mcp.ClientSession, error) {
		deadline := time.Now().Add(5 * time.Second)
		cs, err := connect()
		for err != nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			cs, err = connect()
		}
		if err == nil {
			t.Cleanup(func() { cs.Close() })
		}
		return cs, err
	}
	a, err := connectSoon()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectSoon(); err != nil {
		t.Fatal(err)
	}
	if _, err := connect(); err == nil || !strings.Contains(err.Error(), "503") && !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("third session: %v, want 503", err)
	}
	// Open sessions keep working; closing one makes room.
	if res := call(t, a, DiscoverTools, map[string]any{}); res.IsError {
		t.Errorf("call on an open session: %s", text(res))
	}
	a.Close()
	if _, err := connectSoon(); err != nil {
		t.Errorf("a session after one closed: %v", err)
	}
}
