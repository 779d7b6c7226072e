package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// manyDomains is a catalog of n domains of two tools each.
func manyDomains(n int) string {
	var ds []string
	for i := 0; i < n; i++ {
		ds = append(ds, fmt.Sprintf(`{"name":"d%04d","description":"Domain %d","tools":[
 {"name":"a","description":"First tool of domain %d.","inputSchema":{"type":"object"}},
 {"name":"b","description":"Second tool of domain %d.","inputSchema":{"type":"object"}}]}`, i, i, i, i))
	}
	return `{"domains":[` + strings.Join(ds, ",") + `]}`
}

func TestDomainListingPages(t *testing.T) {
	t.Parallel()
	cs := connect(t, New(Options{Live: testLive(t, manyDomains(120), nil)}))
	seen := map[string]bool{}
	cursor := ""
	pages := 0
	for {
		args := map[string]any{}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var page Contents
		if err := json.Unmarshal([]byte(structured(t, call(t, cs, DiscoverTools, args))), &page); err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page.Domains) > PageSize || page.TotalDomains != 120 || page.TotalTools != 240 {
			t.Fatalf("page %d: %d domains, totals %d/%d", pages, len(page.Domains), page.TotalDomains, page.TotalTools)
		}
		for _, d := range page.Domains {
			if seen[d.Name] {
				t.Errorf("%s listed twice", d.Name)
			}
			seen[d.Name] = true
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if len(seen) != 120 || pages != 3 {
		t.Errorf("%d domains in %d pages, want 120 in 3", len(seen), pages)
	}
	// limit sets the page size; a domain's tools page the same way.
	var small Contents
	json.Unmarshal([]byte(structured(t, call(t, cs, DiscoverTools, map[string]any{"limit": 7}))), &small)
	if len(small.Domains) != 7 || small.NextCursor != "7" {
		t.Errorf("limit 7: %d domains, next %q", len(small.Domains), small.NextCursor)
	}
	var tools DomainListing
	json.Unmarshal([]byte(structured(t, call(t, cs, DiscoverTools, map[string]any{"domain": "d0003", "limit": 1}))), &tools)
	if len(tools.Tools) != 1 || tools.Total != 2 || tools.NextCursor != "1" {
		t.Errorf("domain page: %+v", tools)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"cursor": "abc"}, "next_cursor of the previous page"},
		{map[string]any{"cursor": "500"}, "next_cursor of the previous page"},
		{map[string]any{"query": "first tool", "cursor": "50"}, "use limit"},
	} {
		if res := call(t, cs, DiscoverTools, tc.args); !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("%v: %v %q, want an error containing %q", tc.args, res.IsError, text(res), tc.want)
		}
	}
}

// TestDownServerIsListed: a server that is down from the start is listed
// by discover_tools with its status, and naming its domain says why it has
// no tools instead of "unknown domain".
func TestDownServerIsListed(t *testing.T) {
	t.Parallel()
	broken := gateway.UpstreamConfig{Domain: "broken", Command: "/nonexistent/toolscout-test-server", ConnectTimeout: time.Second}
	env := startGateway(t, []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok"), broken}, Exposure{Mode: ExposeMeta})
	var page Contents
	if err := json.Unmarshal([]byte(structured(t, call(t, env.cs, DiscoverTools, map[string]any{}))), &page); err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, d := range page.Domains {
		status[d.Name] = d.Status
	}
	if _, ok := status["fake"]; !ok || status["fake"] != "" || !strings.HasPrefix(status["broken"], "unavailable: ") {
		t.Errorf("listing = %+v, want fake up and broken unavailable with the reason", page.Domains)
	}
	res := call(t, env.cs, DiscoverTools, map[string]any{"domain": "broken"})
	if !res.IsError || !strings.Contains(text(res), `server "broken" is unavailable`) || strings.Contains(text(res), "unknown domain") {
		t.Errorf("domain broken = %q, want the server named as unavailable", text(res))
	}
}

// TestFallbackAfterSearchFailures: with Fallback "eager", searches that
// keep failing (not bad requests) switch tools/list to every tool.
func TestFallbackAfterSearchFailures(t *testing.T) {
	t.Parallel()
	for _, fallback := range []string{"", string(ExposeEager)} {
		live, st := testLiveStore(t, "", testCatalog, nil)
		cs := connect(t, New(Options{Live: live, Fallback: fallback}))
		st.Keyword.Close() // every search fails from now on
		for i := 0; i < FallbackAfter; i++ {
			if res := call(t, cs, DiscoverTools, map[string]any{"query": "weather forecast"}); !res.IsError {
				t.Fatalf("search on a closed index succeeded: %s", text(res))
			}
			// Bad requests do not count.
			call(t, cs, DiscoverTools, map[string]any{"query": "x", "domain": "nope"})
		}
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := 3
		if fallback == string(ExposeEager) {
			want += live.Engine().Catalog().Len()
		}
		if len(res.Tools) != want {
			t.Errorf("fallback %q: tools/list has %d tools after %d failed searches, want %d", fallback, len(res.Tools), FallbackAfter, want)
		}
	}
}

// TestBigUpstreamResult: a 17 MiB result (over the SDK's 16 MiB default)
// comes through the gateway, and the upstream's session goes on: the same
// process answers the next call. (The gateway is called directly: the
// in-memory test client has the SDK's own 16 MiB limit.)
func TestBigUpstreamResult(t *testing.T) {
	t.Parallel()
	env := startGateway(t, []gateway.UpstreamConfig{fakeConfig(t, "fake", "big")}, Exposure{Mode: ExposeMeta})
	waitFor(t, "the fake upstream's tools", func() bool { return env.hasTool("fake__big") })
	exec := func(name string) *mcp.CallToolResult {
		t.Helper()
		tool := env.srv.eng.Catalog().Tool(name)
		res, err := env.gw.Execute(context.Background(), nil, tool, map[string]any{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	before := text(exec("fake__pid"))
	if res := exec("fake__big"); res.IsError || len(text(res)) != bigAnswer {
		t.Fatalf("big result: error %v, %d bytes; want %d", res.IsError, len(text(res)), bigAnswer)
	}
	if after := text(exec("fake__pid")); before == "" || before != after {
		t.Errorf("server process %q before the big result, %q after: the session was restarted", before, after)
	}
}

// TestOversizeUpstreamAnswer: an answer over the limit fails its call with
// a clear error, and the session goes on with the same process.
func TestOversizeUpstreamAnswer(t *testing.T) {
	t.Parallel()
	env := startGatewayWith(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "big")}, MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, MaxMessage: 1 << 20}, Exposure{Mode: ExposeMeta})
	waitFor(t, "the fake upstream's tools", func() bool { return env.hasTool("fake__big") })
	pid := func() string {
		res, err := env.gw.Execute(context.Background(), nil, env.srv.eng.Catalog().Tool("fake__pid"), map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		return text(res)
	}
	before := pid()
	_, err := env.gw.Execute(context.Background(), nil, env.srv.eng.Catalog().Tool("fake__big"), map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "over the 1048576 toolscout accepts") {
		t.Fatalf("oversize answer: %v, want a clear error", err)
	}
	if after := pid(); before == "" || before != after {
		t.Errorf("server process %q before, %q after the oversize answer: the session was restarted", before, after)
	}
}

// TestEndedSessionsAreForgotten: every session that lists tools is
// recorded for list_changed, and sessions end without telling; the
// record must follow the sessions open, not grow with every session
// there ever was (it kept each one for good in meta mode, where the
// view's tools never change). 160 sessions: over the 128 allowed, so a
// record that keeps them all fails; the record is pruned from 64.
func TestEndedSessionsAreForgotten(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, nil)})
	const sessions = 160
	for range sessions {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.MCP().Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		cs.Close()
		ss.Wait()
	}
	srv.views.primary.sync.mu.Lock()
	n := len(srv.views.primary.sync.current)
	srv.views.primary.sync.mu.Unlock()
	if n > 128 {
		t.Errorf("%d sessions recorded after %d that listed and ended, want at most 128", n, sessions)
	}
}
