package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/gateway"
)

// Issue 52, item 10: what toolscout logs at the default level (info) is
// what an operator acts on, not a line per request or per routine event.

// all returns every record logged, in order.
func (b *logBuffer) all() []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(b.String(), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// atLeast returns the records logged at level or above ("INFO", "WARN").
func (b *logBuffer) atLeast(level string) []map[string]any {
	rank := map[string]int{"DEBUG": 0, "INFO": 1, "WARN": 2, "ERROR": 3}
	var out []map[string]any
	for _, r := range b.all() {
		if l, _ := r["level"].(string); rank[l] >= rank[level] {
			out = append(out, r)
		}
	}
	return out
}

// TestShutdownSaysShuttingDown: closing the gateway (a SIGTERM) with
// one server connected and one still connecting logs that toolscout is
// shutting down, once, and no warning: the connection attempt the
// shutdown cut is no "upstream unavailable ... context canceled".
func TestShutdownSaysShuttingDown(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	hang := fakeConfig(t, "hang", "hang")
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok"), hang}, Logger: logs.logger()}, Options{})
	waitFor(t, "the fake server", func() bool { return env.hasTool("fake__echo") })
	env.gw.Close()
	if got := logs.atLeast("WARN"); len(got) > 0 {
		t.Errorf("closing the gateway logged %d warnings or errors, want none: %v", len(got), got)
	}
	if got := logs.records("closing the upstream servers: toolscout is shutting down"); len(got) != 1 || got[0]["level"] != "INFO" || got[0]["servers"] != float64(2) {
		t.Errorf("closing the gateway logged %v, want one info record saying toolscout is shutting down, for 2 servers", got)
	}
}

// TestUndeliverableNotificationIsNoWarning: a 2025-11-25 session that
// opened no GET stream (the specification makes it optional) cannot be
// sent a list change: that is no warning.
func TestUndeliverableNotificationIsNoWarning(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	live := testLive(t, testCatalog, nil)
	srv := New(Options{Live: live, Expose: Exposure{Mode: ExposeEager}, Logger: logs.logger()})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	resp := postRPC(t, hs.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"no-stream","version":"1"}}}`, nil)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize at 2025-11-25: no session (status %d)", resp.StatusCode)
	}
	session := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	postRPC(t, hs.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session).Body.Close()
	resp = postRPC(t, hs.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, session)
	resp.Body.Close()
	// A tool appears: the session's tools/list changes.
	specs := specsOf(t, testCatalog)
	specs = append(specs, index.DomainSpec{Name: "extra", Description: "An extra domain", Tools: []index.ToolSpec{{Name: "ping", Description: "Answer pong.", InputSchema: json.RawMessage(`{"type":"object"}`)}}})
	if _, err := live.Update(context.Background(), specs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the undeliverable notification", func() bool {
		for _, r := range logs.all() {
			if msg, _ := r["msg"].(string); strings.HasPrefix(msg, "calling notifications/tools/list_changed") {
				return true
			}
		}
		return false
	})
	for _, r := range logs.atLeast("WARN") {
		t.Errorf("a list change for a session without a GET stream logged %v %q, want it at debug", r["level"], r["msg"])
	}
}

// TestStatelessRequestsLogNothing: requests of the stateless protocol
// log nothing at the default level: at 72 a second, the go-sdk's three
// info lines a request (a "session" connected and disconnected, with no
// id) came to 770 MB a day.
func TestStatelessRequestsLogNothing(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	srv := New(Options{Live: testLive(t, testCatalog, nil), Logger: logs.logger()})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	const n = 20
	for i := range n {
		code, ans := statelessPost(t, hs.URL, "tools/call", map[string]any{"name": DiscoverTools, "arguments": map[string]any{"query": fmt.Sprint("open an issue ", i)}}, nil)
		if code != http.StatusOK || ans["result"] == nil {
			t.Fatalf("stateless discover_tools: %d %v", code, ans)
		}
	}
	// Each request's last record is its session's "server session
	// disconnected" (at debug): the log is read once all n are there,
	// not after a guessed 100 ms, past which a record written later (by
	// a goroutine, or on a loaded machine) went unseen (issue 47).
	waitFor(t, fmt.Sprint(n, " sessions disconnected"), func() bool { return len(logs.records("server session disconnected")) >= n })
	if got := logs.atLeast("INFO"); len(got) > 0 {
		t.Errorf("%d stateless requests logged %d records at info or above, want none; first: %v", n, len(got), got[0])
	}
}
