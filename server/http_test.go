package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"

	"github.com/toolscout/toolscout/server/gateway"
)

// sessionOpts makes a go-sdk client speak the 2025-11-25 protocol, with a
// session; without it, a v1.8.0 client speaks the stateless protocol to a
// server that has it.
var sessionOpts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// connectURL connects a go-sdk client of the protocol ("" for the
// go-sdk's newest) to url, over hc when set.
func connectURL(t *testing.T, url string, hc *http.Client, protocol string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client-" + protocol, Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connect at protocol %q: %v", protocol, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// serveHTTPGateway starts a gateway to a fake upstream, exposed exp, and
// serves it over HTTP.
func serveHTTPGateway(t *testing.T, exp Exposure) (*gatewayEnv, *httptest.Server) {
	t.Helper()
	env := startGateway(t, []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok"), fakeConfig(t, "other", "ok")}, exp)
	waitFor(t, "the fakes' tools", func() bool { return env.hasTool("fake__echo") && env.hasTool("other__echo") })
	hs := httptest.NewServer(env.srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	return env, hs
}

// workflow runs discover_tools → get_tool_schema → execute_tool for
// fake__echo on cs and fails the test on a wrong answer.
func workflow(t *testing.T, cs *mcp.ClientSession, word string) {
	t.Helper()
	res := call(t, cs, DiscoverTools, map[string]any{"query": "echo the text back", "domain": "fake", "limit": 3})
	if res.IsError || !strings.Contains(text(res), "fake__echo") {
		t.Fatalf("discover_tools = %s, want fake__echo ranked", text(res))
	}
	res = call(t, cs, GetToolSchema, map[string]any{"tool_name": "fake__echo"})
	if res.IsError || !strings.Contains(text(res), `"required":["text"]`) {
		t.Fatalf("get_tool_schema = %s, want fake__echo's schema", text(res))
	}
	res = call(t, cs, ExecuteTool, map[string]any{"tool_name": "fake__echo", "arguments": map[string]any{"text": word}})
	if res.IsError || text(res) != word {
		t.Fatalf("execute_tool = %v %q, want %q from the upstream", res.IsError, text(res), word)
	}
}

// TestBothProtocolsOneEndpoint: a client of the stateless protocol and a
// 2025-11-25 client run the same workflow, through the gateway to an
// upstream, on the same endpoint at once; only the second holds a
// session.
func TestBothProtocolsOneEndpoint(t *testing.T) {
	t.Parallel()
	env, hs := serveHTTPGateway(t, Exposure{Mode: ExposeMeta})
	tests := []struct {
		name      string
		protocol  string // asked for
		want      string // negotiated
		stateless bool   // no session
	}{
		{"stateless", StatelessProtocol, StatelessProtocol, true},
		{"newest", "", StatelessProtocol, true},
		{"2025-11-25", "2025-11-25", "2025-11-25", false},
		{"2025-06-18", "2025-06-18", "2025-06-18", false},
	}
	var wg sync.WaitGroup
	for _, tc := range tests {
		cs := connectURL(t, hs.URL, nil, tc.protocol)
		if got := cs.InitializeResult().ProtocolVersion; got != tc.want {
			t.Errorf("%s: negotiated %s, want %s", tc.name, got, tc.want)
		}
		if (cs.ID() == "") != tc.stateless {
			t.Errorf("%s: session id %q; want one only at 2025-11-25 and older", tc.name, cs.ID())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(tc.name, func(t *testing.T) {
				for i := range 3 {
					workflow(t, cs, tc.name+itoa(i))
				}
			})
		}()
	}
	wg.Wait()
	if n := env.srv.SessionCount(); n != 2 {
		t.Errorf("%d sessions open, want 2 (the stateless clients open none)", n)
	}
}

// listToolNamed lists cs's tools and returns the one named name, failing
// the test when it is not listed.
func listToolNamed(t *testing.T, cs *mcp.ClientSession, name string) *mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("tools/list = %v, want %s", toolNames(res), name)
	return nil
}

// toolNames returns the names of the tools a tools/list answered.
func toolNames(res *mcp.ListToolsResult) []string {
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// roundRobin is a load balancer in front of replicas, without affinity:
// each request goes to the next replica.
type roundRobin struct {
	mu     sync.Mutex
	hosts  []string
	next   int
	served map[string]int
}

func (lb *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	lb.mu.Lock()
	host := lb.hosts[lb.next%len(lb.hosts)]
	lb.next++
	lb.served[host]++
	lb.mu.Unlock()
	r = r.Clone(r.Context())
	r.URL.Host, r.Host = host, host
	return http.DefaultTransport.RoundTrip(r)
}

func (lb *roundRobin) replace(old, new string) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.hosts[slices.Index(lb.hosts, old)] = new
}

// TestStatelessReplicas: a client of the stateless protocol behind a
// round-robin balancer over two replicas in dynamic mode (each its own
// server, index and gateway with its own upstream process), one of which
// is restarted half way: replaced by a new one, which has nothing of the
// old one's memory.
// No request fails, and the enabled domains travel with the requests as
// a toolset: every replica lists and runs them.
func TestStatelessReplicas(t *testing.T) {
	t.Parallel()
	exp := Exposure{Mode: ExposeDynamic}
	r0, hs0 := serveHTTPGateway(t, exp)
	r1, hs1 := serveHTTPGateway(t, exp)
	lb := &roundRobin{hosts: []string{hs0.Listener.Addr().String(), hs1.Listener.Addr().String()}, served: map[string]int{}}
	cs := connectURL(t, "http://replicas.test/mcp", &http.Client{Transport: lb}, StatelessProtocol)
	ctx := context.Background()
	list := func(toolset string) *mcp.ListToolsResult {
		t.Helper()
		p := &mcp.ListToolsParams{}
		if toolset != "" {
			p.Meta = mcp.Meta{ToolsetMetaKey: toolset}
		}
		res, err := cs.ListTools(ctx, p)
		if err != nil {
			t.Fatalf("tools/list with toolset %q: %v", toolset, err)
		}
		return res
	}
	names := func(res *mcp.ListToolsResult) string {
		out := toolNames(res)
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	enable := func(domain, toolset string) EnableAnswer {
		t.Helper()
		args := map[string]any{"domain": domain}
		if toolset != "" {
			args["toolset"] = toolset
		}
		res := call(t, cs, EnableDomain, args)
		var a EnableAnswer
		if err := json.Unmarshal([]byte(structured(t, res)), &a); res.IsError || err != nil {
			t.Fatalf("enable_domain %s = %s", domain, text(res))
		}
		return a
	}
	const base = "disable_domain,discover_tools,enable_domain,execute_tool,get_tool_schema"

	a := enable("fake", "")
	if !slices.Equal(a.Enabled, []string{"fake"}) || !strings.Contains(a.Note, "execute_tool") || !strings.Contains(a.Note, ToolsetMetaKey) {
		t.Errorf("enable_domain fake = %+v, want fake enabled and the stateless note", a)
	}
	for range 2 { // once on each replica
		workflow(t, cs, "hello")
		if got := names(list("")); got != base {
			t.Errorf("tools/list without a toolset = %s, want %s: enable_domain may not change it", got, base)
		}
		res := list(a.Toolset)
		if got := names(res); !strings.Contains(got, "fake__echo") || strings.Contains(got, "other__") || res.CacheScope != cachePrivate || res.TTLMs != 0 {
			t.Errorf("tools/list with fake's toolset = %s (%s, ttl %d), want fake's tools, private, ttl 0", got, res.CacheScope, res.TTLMs)
		}
		res2, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake__echo", Arguments: map[string]any{"text": "direct"}, Meta: mcp.Meta{ToolsetMetaKey: a.Toolset}})
		if err != nil || res2.IsError || text(res2) != "direct" {
			t.Errorf("fake__echo by name with the toolset = %v %v", err, res2)
		}
	}

	// Restart replica 0: a new process, over the same catalog.
	hs0.Close()
	r0b, hs0b := serveHTTPGateway(t, exp)
	lb.replace(hs0.Listener.Addr().String(), hs0b.Listener.Addr().String())
	b := enable("other", a.Toolset)
	if !slices.Equal(b.Enabled, []string{"fake", "other"}) {
		t.Errorf("enable_domain other on fake's toolset = %v, want fake and other", b.Enabled)
	}
	for range 2 {
		workflow(t, cs, "again")
		if got := names(list(b.Toolset)); !strings.Contains(got, "fake__echo") || !strings.Contains(got, "other__echo") {
			t.Errorf("tools/list with both domains' toolset = %s", got)
		}
	}
	// disable_domain takes one away, on whichever replica.
	var c EnableAnswer
	res := call(t, cs, DisableDomain, map[string]any{"domain": "fake", "toolset": b.Toolset})
	if err := json.Unmarshal([]byte(structured(t, res)), &c); err != nil || !slices.Equal(c.Enabled, []string{"other"}) {
		t.Errorf("disable_domain fake = %s, want other left", text(res))
	}
	lb.mu.Lock()
	served := len(lb.served)
	lb.mu.Unlock()
	if served != 3 {
		t.Errorf("requests reached %d replicas, want 3 (two, one restarted)", served)
	}
	for i, r := range []*gatewayEnv{r0, r1, r0b} {
		if views, kept := r.srv.ViewCount(), r.srv.views.keptToolsets(); views != 1+kept || kept > 2 {
			t.Errorf("replica %d holds %d views and keeps %d toolsets, want the primary and at most the 2 toolsets", i, views, kept)
		}
	}
}

// TestToolsetHealsAndRefuses: a toolset naming a domain the server does not
// have (made before the catalog changed) is healed with a warning; a
// handle that no answer gave is refused with what to do.
func TestToolsetHealsAndRefuses(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, nil), Expose: Exposure{Mode: ExposeDynamic}})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	cs := connectURL(t, hs.URL, nil, StatelessProtocol)
	stale := encodeToolset(map[string]bool{"github/issues": true, "gone": true, "weather/nogroup": true})
	res := call(t, cs, EnableDomain, map[string]any{"domain": "jira", "toolset": stale})
	var a EnableAnswer
	json.Unmarshal([]byte(structured(t, res)), &a)
	if res.IsError || !slices.Equal(a.Enabled, []string{"github/issues", "jira"}) || len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0], "gone, weather/nogroup") {
		t.Errorf("enable_domain on a stale toolset = %s, want github/issues and jira enabled, gone and weather/nogroup named in a warning", text(res))
	}
	lres, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Meta: mcp.Meta{ToolsetMetaKey: stale}})
	if err != nil || len(lres.Tools) != 5+2 {
		t.Errorf("tools/list with the stale toolset: %v, %d tools, want the 5 and github's 2 issue tools", err, len(lres.Tools))
	}

	long := toolsetPrefix + strings.Repeat("A", MaxToolsetLen)
	for _, tc := range []struct {
		name, toolset, want string
	}{
		{"no prefix", "github", `does not start with "ts1."`},
		{"not base64", "ts1.***", "illegal base64"},
		{"not a list", toolsetPrefix + "eyJhIjoxfQ", "cannot unmarshal"},
		{"empty domain", encodeToolset(map[string]bool{"/issues": true}), "which is no domain"},
		{"too long", long, "over the 8192"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, EnableDomain, map[string]any{"domain": "jira", "toolset": tc.toolset})
			if !res.IsError || !strings.Contains(text(res), tc.want) || !strings.Contains(text(res), "or none to start a new set") {
				t.Errorf("enable_domain with toolset %.40q = %v %q, want an error containing %q", tc.toolset, res.IsError, text(res), tc.want)
			}
			_, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Meta: mcp.Meta{ToolsetMetaKey: tc.toolset}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("tools/list with toolset %.40q: %v, want an error containing %q", tc.toolset, err, tc.want)
			}
		})
	}
	if _, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Meta: mcp.Meta{ToolsetMetaKey: 42}}); err == nil || !strings.Contains(err.Error(), "must be a string") {
		t.Errorf("tools/list with a number for a toolset: %v, want an error", err)
	}
	if views, kept := srv.ViewCount(), srv.views.keptToolsets(); views != 1+kept || kept != 1 {
		t.Errorf("%d views, %d toolsets kept; want the primary and the one valid toolset", views, kept)
	}
}

// keptToolsets returns the number of toolset views e keeps.
func (t *viewTable) keptToolsets() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.toolsets.order.Len()
}

// TestToolsetViewsAreKept: the view of a toolset is made once and kept
// for the requests that carry it again, follows catalog changes while
// kept, and at most maxToolsetViews are kept.
func TestToolsetViewsAreKept(t *testing.T) {
	if !inOwnProcess(t) { // it sets maxToolsetViews, which every server reads
		return
	}
	env, hs := serveHTTPGateway(t, Exposure{Mode: ExposeDynamic})
	cs := connectURL(t, hs.URL, nil, StatelessProtocol)
	ctx := context.Background()
	listWith := func(keys map[string]bool) []string {
		t.Helper()
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Meta: mcp.Meta{ToolsetMetaKey: encodeToolset(keys)}})
		if err != nil {
			t.Fatal(err)
		}
		return toolNames(res)
	}
	fake := map[string]bool{"fake": true}
	for range 5 {
		listWith(fake)
	}
	if views, kept := env.srv.ViewCount(), env.srv.views.keptToolsets(); views != 2 || kept != 1 {
		t.Errorf("5 requests with one toolset: %d views, %d kept; want 2 and 1", views, kept)
	}
	call(t, cs, ExecuteTool, map[string]any{"tool_name": "fake__add_tool"})
	waitFor(t, "fake__second indexed", func() bool { return env.hasTool("fake__second") })
	waitFor(t, "fake__second in the kept view", func() bool { return slices.Contains(listWith(fake), "fake__second") })

	defer func(n int) { maxToolsetViews = n }(maxToolsetViews)
	maxToolsetViews = 2
	for _, keys := range []map[string]bool{{"other": true}, {"fake": true, "other": true}, fake} {
		if got := listWith(keys); !slices.Contains(got, "fake__echo") && keys["fake"] || !slices.Contains(got, "other__echo") && keys["other"] {
			t.Errorf("tools/list with %v = %v", keys, got)
		}
	}
	if views, kept := env.srv.ViewCount(), env.srv.views.keptToolsets(); views != 3 || kept != 2 {
		t.Errorf("3 toolsets with room for 2: %d views, %d kept; want 3 and 2", views, kept)
	}
}

// TestCacheHints: ttlMs and cacheScope say the truth: a list that follows
// one client's enable_domain is private and not cached; a list the same
// for everyone is public.
func TestCacheHints(t *testing.T) {
	t.Parallel()
	live := testLive(t, testCatalog, nil)
	ttl := int(ListTTL.Milliseconds())
	tests := []struct {
		name     string
		mode     Mode
		protocol string
		toolset  bool
		scope    string
		ttl      int
	}{
		{"meta/stateless", ExposeMeta, StatelessProtocol, false, cachePublic, ttl},
		{"meta/session", ExposeMeta, "2025-11-25", false, cachePublic, ttl},
		{"eager/stateless", ExposeEager, StatelessProtocol, false, cachePublic, ttl},
		{"auto/session", ExposeAuto, "2025-11-25", false, cachePublic, ttl},
		{"compact/stateless", ExposeCompact, StatelessProtocol, false, cachePublic, ttl},
		{"dynamic/stateless", ExposeDynamic, StatelessProtocol, false, cachePublic, 0},
		{"dynamic/stateless+toolset", ExposeDynamic, StatelessProtocol, true, cachePrivate, 0},
		{"dynamic/session", ExposeDynamic, "2025-11-25", false, cachePrivate, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := New(Options{Live: live, Expose: Exposure{Mode: tc.mode}})
			hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
			t.Cleanup(hs.Close)
			cs := connectURL(t, hs.URL, nil, tc.protocol)
			p := &mcp.ListToolsParams{}
			if tc.toolset {
				p.Meta = mcp.Meta{ToolsetMetaKey: encodeToolset(map[string]bool{"weather": true})}
			}
			res, err := cs.ListTools(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if res.CacheScope != tc.scope || res.TTLMs != tc.ttl {
				t.Errorf("tools/list: cacheScope %q, ttlMs %d; want %q, %d", res.CacheScope, res.TTLMs, tc.scope, tc.ttl)
			}
		})
	}
	// The stdio (or in-memory) client's list in dynamic mode is its own.
	cs := connect(t, New(Options{Live: live, Expose: Exposure{Mode: ExposeDynamic}}))
	if res, err := cs.ListTools(context.Background(), nil); err != nil || res.CacheScope != cachePrivate || res.TTLMs != 0 {
		t.Errorf("in-memory dynamic tools/list: %v %+v, want private, ttl 0", err, res)
	}
}

// statelessPost sends a raw request of the stateless protocol: the body
// of method with params (plus the _meta the protocol asks for) and the
// routing headers, which headers may change ("" removes one).
func statelessPost(t *testing.T, url, method string, params map[string]any, headers map[string]string) (int, map[string]any) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if _, ok := params["_meta"]; !ok {
		params["_meta"] = map[string]any{mcp.MetaKeyProtocolVersion: StatelessProtocol,
			mcp.MetaKeyClientInfo: map[string]any{"name": "raw", "version": "1"}, mcp.MetaKeyClientCapabilities: map[string]any{}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", StatelessProtocol)
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, readAnswer(t, resp)
}

// readAnswer decodes a JSON-RPC answer sent as JSON or as the last
// message event of an SSE stream.
func readAnswer(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	var data []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = []byte(d)
			}
		}
	} else {
		data, _ = io.ReadAll(resp.Body)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("answer %q (status %d) is no JSON-RPC message: %v", data, resp.StatusCode, err)
	}
	return out
}

// TestRoutingHeaders: the routing headers of the stateless protocol must
// match the body (SEP-2243); a mismatch is refused with 400 and
// HeaderMismatch (-32020) before anything runs.
func TestRoutingHeaders(t *testing.T) {
	t.Parallel()
	ex := &fakeExecutor{}
	srv := New(Options{Live: testLive(t, testCatalog, nil), Executor: ex})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	run := map[string]any{"name": ExecuteTool, "arguments": map[string]any{"tool_name": "github__list_issues"}}
	tests := []struct {
		name    string
		version string // in _meta; "" for StatelessProtocol
		headers map[string]string
		status  int
		code    float64 // 0: a result
		want    string
	}{
		{"matching", "", nil, 200, 0, ""},
		{"Mcp-Name differs", "", map[string]string{"Mcp-Name": DiscoverTools}, 400, -32020, "Mcp-Name header value 'discover_tools' does not match body value 'execute_tool'"},
		{"Mcp-Method differs", "", map[string]string{"Mcp-Method": "tools/list"}, 400, -32020, "Mcp-Method header value 'tools/list' does not match body value 'tools/call'"},
		{"no Mcp-Method", "", map[string]string{"Mcp-Method": ""}, 400, -32020, "missing required Mcp-Method header"},
		{"no Mcp-Name", "", map[string]string{"Mcp-Name": ""}, 400, -32020, "missing required Mcp-Name header"},
		{"no version header", "", map[string]string{"Mcp-Protocol-Version": ""}, 400, -32020, "Mcp-Protocol-Version header is required"},
		{"version header differs from _meta", "", map[string]string{"Mcp-Protocol-Version": "2027-01-01"}, 400, -32020, `header "2027-01-01" does not match`},
		{"unknown version", "2027-01-01", map[string]string{"Mcp-Protocol-Version": "2027-01-01"}, 400, -32022, "unsupported protocol version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := ex.calls
			params := maps.Clone(run)
			if tc.version != "" {
				params["_meta"] = map[string]any{mcp.MetaKeyProtocolVersion: tc.version, mcp.MetaKeyClientCapabilities: map[string]any{}}
			}
			status, ans := statelessPost(t, hs.URL, "tools/call", params, tc.headers)
			errObj, _ := ans["error"].(map[string]any)
			if status != tc.status {
				t.Errorf("status %d, want %d (answer %v)", status, tc.status, ans)
			}
			if tc.code == 0 {
				if errObj != nil || ex.calls != before+1 {
					t.Errorf("answer %v, %d calls run; want a result and the call run", ans, ex.calls-before)
				}
				return
			}
			if errObj == nil || errObj["code"] != tc.code || !strings.Contains(errObj["message"].(string), tc.want) {
				t.Errorf("error %v, want code %v containing %q", errObj, tc.code, tc.want)
			}
			if ex.calls != before {
				t.Errorf("the call ran despite the mismatch")
			}
		})
	}
}

// TestServerDiscover: server/discover (SEP-2575) names both generations,
// the server and its instructions, and is cacheable by anyone.
func TestServerDiscover(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, nil), Version: "1.2.3"})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	status, ans := statelessPost(t, hs.URL, "server/discover", nil, nil)
	res, _ := ans["result"].(map[string]any)
	if status != 200 || res == nil {
		t.Fatalf("server/discover: status %d, answer %v", status, ans)
	}
	var versions []string
	for _, v := range res["supportedVersions"].([]any) {
		versions = append(versions, v.(string))
	}
	info, _ := res["_meta"].(map[string]any)[mcp.MetaKeyServerInfo].(map[string]any)
	caps, _ := res["capabilities"].(map[string]any)
	switch {
	case !slices.Contains(versions, StatelessProtocol) || !slices.Contains(versions, "2025-11-25"):
		t.Errorf("supportedVersions = %v, want %s and 2025-11-25", versions, StatelessProtocol)
	case caps["tools"] == nil:
		t.Errorf("capabilities = %v, want tools", caps)
	case info["name"] != "toolscout" || info["version"] != "1.2.3":
		t.Errorf("serverInfo = %v", info)
	case res["instructions"] != srv.greet.now(nil):
		t.Errorf("instructions = %v, want %q", res["instructions"], srv.greet.now(nil))
	case res["cacheScope"] != cachePublic || res["ttlMs"] != float64(ListTTL.Milliseconds()):
		t.Errorf("cacheScope %v, ttlMs %v; want public, %d", res["cacheScope"], res["ttlMs"], ListTTL.Milliseconds())
	}
	// A go-sdk client learns the same by server/discover, without a handshake.
	cs := connectURL(t, hs.URL, nil, "")
	if ir := cs.InitializeResult(); ir.ProtocolVersion != StatelessProtocol || ir.Instructions != srv.greet.now(nil) || ir.ServerInfo == nil || ir.ServerInfo.Version != "1.2.3" {
		t.Errorf("go-sdk client's discovery = %+v", ir)
	}
}

// TestMaxSessionsIgnoresStateless: stateless requests open no session, so
// they neither count toward --max-sessions nor are refused by it.
func TestMaxSessionsIgnoresStateless(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, nil)})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{MaxSessions: 1}))
	t.Cleanup(hs.Close)
	connectURL(t, hs.URL, nil, "2025-11-25")
	cs := connectURL(t, hs.URL, nil, StatelessProtocol)
	if res := call(t, cs, DiscoverTools, map[string]any{}); res.IsError {
		t.Errorf("stateless call with the one session open: %s", text(res))
	}
	if n := srv.SessionCount(); n != 1 {
		t.Errorf("%d sessions counted, want 1", n)
	}
}

// TestStatelessListChanged: a client of the stateless protocol that
// listens (subscriptions/listen) is told when tools/list changes, here an
// eager list after a tool appeared upstream.
func TestStatelessListChanged(t *testing.T) {
	t.Parallel()
	env, hs := serveHTTPGateway(t, Exposure{Mode: ExposeEager})
	changed := make(chan struct{}, 10)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if cs.ID() != "" {
		t.Fatalf("the client holds session %q, want the stateless protocol", cs.ID())
	}
	call(t, cs, ExecuteTool, map[string]any{"tool_name": "fake__add_tool"})
	waitFor(t, "fake__second indexed", func() bool { return env.hasTool("fake__second") })
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed within 10 s")
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || !slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "fake__second" }) {
		t.Errorf("tools/list after the change: %v, want fake__second", err)
	}
}

// blockingExecutor runs every tool until its context ends, and says so.
type blockingExecutor struct{ cancelled chan struct{} }

func (b *blockingExecutor) Execute(ctx context.Context, _ *mcp.CallToolRequest, _ *index.Tool, _ map[string]any) (*mcp.CallToolResult, error) {
	<-ctx.Done()
	close(b.cancelled)
	return nil, ctx.Err()
}

// TestStatelessCancel: a stateless client that gives up on a call (closes
// its request) cancels the call on the server.
func TestStatelessCancel(t *testing.T) {
	t.Parallel()
	ex := &blockingExecutor{cancelled: make(chan struct{})}
	srv := New(Options{Live: testLive(t, testCatalog, nil), Executor: ex})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	cs := connectURL(t, hs.URL, nil, StatelessProtocol)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ExecuteTool, Arguments: map[string]any{"tool_name": "github__list_issues"}}); err == nil {
		t.Fatal("the call returned before its upstream did")
	}
	select {
	case <-ex.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call was not cancelled within 10 s of the client giving up")
	}
}

// TestBodyTooLargeClosesTheConnection: a body over the go-sdk's limit is
// refused with 413 and, as net/http does for its own handlers, the
// connection is closed after the answer rather than kept for a client
// that may still be sending the rest.
func TestBodyTooLargeClosesTheConnection(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, nil)})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	for _, header := range []map[string]string{
		{}, // peekBody reads it
		{"Mcp-Protocol-Version": StatelessProtocol}, // the go-sdk reads it
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", mcp.DefaultMaxRequestBodyBytes) + `"}}`
		resp := postRPC(t, hs.URL, body, header)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
			t.Errorf("headers %v: status %d, connection closed %v; want 413 and the connection closed", header, resp.StatusCode, resp.Close)
		}
	}
}

// postRPC posts a JSON-RPC body to url as an MCP client would, with
// headers, and returns the response (its body for the caller to close).
func postRPC(t *testing.T, url, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestLegacySessionWithModernMeta: a request inside a live 2025-06-18
// session whose _meta says 2026-07-28 contradicts its own version header:
// the transport spec asks for 400 HeaderMismatch naming both, not "the
// session's version is not supported" (what the go-sdk's stateful
// handler answered). With the header and _meta both 2026-07-28 the
// request is of the stateless protocol and served as one, its stale
// session id ignored.
func TestLegacySessionWithModernMeta(t *testing.T) {
	t.Parallel()
	ex := &fakeExecutor{}
	srv := New(Options{Live: testLive(t, testCatalog, nil), Executor: ex})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	post := func(body string, headers map[string]string) (*http.Response, map[string]any) {
		t.Helper()
		resp := postRPC(t, hs.URL, body, headers)
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusAccepted {
			return resp, nil
		}
		return resp, readAnswer(t, resp)
	}
	resp, _ := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize at 2025-06-18: no session (status %d)", resp.StatusCode)
	}
	legacy := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacy)
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_tool","arguments":{"tool_name":"github__list_issues"},` + modernMeta + `}}`

	resp, ans := post(call, legacy)
	errObj, _ := ans["error"].(map[string]any)
	msg, _ := errObj["message"].(string)
	if resp.StatusCode != http.StatusBadRequest || errObj["code"] != float64(-32020) || !strings.Contains(msg, "2025-06-18") || !strings.Contains(msg, "2026-07-28") || strings.Contains(msg, "not supported") {
		t.Errorf("legacy header, modern _meta: status %d, answer %v; want 400 HeaderMismatch naming both versions", resp.StatusCode, ans)
	}
	if ans["id"] != float64(2) {
		t.Errorf("the error answers id %v, want the request's 2", ans["id"])
	}
	if ex.calls != 0 {
		t.Errorf("the call ran despite the mismatch")
	}
	// Without any version header, in the session: the same contradiction.
	resp, ans = post(call, map[string]string{"Mcp-Session-Id": sid})
	errObj, _ = ans["error"].(map[string]any)
	if resp.StatusCode != http.StatusBadRequest || errObj["code"] != float64(-32020) {
		t.Errorf("no version header, modern _meta in a session: status %d, answer %v; want 400 HeaderMismatch", resp.StatusCode, ans)
	}
	// The session still works at its own version.
	resp, ans = post(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, legacy)
	if resp.StatusCode != http.StatusOK || ans["result"] == nil {
		t.Errorf("the session after the refusals: status %d, answer %v", resp.StatusCode, ans)
	}
	// Header and _meta agree on 2026-07-28: a stateless request.
	resp, ans = post(call, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "execute_tool"})
	if resp.StatusCode != http.StatusOK || ans["result"] == nil || ex.calls != 1 {
		t.Errorf("modern header and _meta with a stale session id: status %d, answer %v, %d calls; want it served statelessly", resp.StatusCode, ans, ex.calls)
	}
}
