package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"

	"github.com/toolscout/toolscout/server/gateway"
)

type gatewayEnv struct {
	srv *Server
	gw  *gateway.Gateway
	cs  *mcp.ClientSession
	// listChanged counts tools/list_changed notifications the client got.
	listChanged atomic.Int32
	// progress records the tokens of progress notifications the client got.
	progress chan any
}

// startGateway serves the upstreams through toolscout and connects a
// client to it, like `toolscout serve --config` does.
func startGateway(t *testing.T, ups []gateway.UpstreamConfig, exp Exposure) *gatewayEnv {
	t.Helper()
	return startGatewayWith(t, gateway.Options{Upstreams: ups, MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond}, exp)
}

// startGatewayWith is startGateway with the gateway's options.
func startGatewayWith(t *testing.T, opts gateway.Options, exp Exposure) *gatewayEnv {
	t.Helper()
	return startGatewayServer(t, opts, Options{Expose: exp})
}

// startGatewayServer is startGatewayWith with the server's options (their
// Live and Executor are the gateway's).
func startGatewayServer(t testing.TB, opts gateway.Options, so Options) *gatewayEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	gw, live, err := openGateway(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	so.Live, so.Executor = live, gw
	srv := New(so)
	gw.Start(ctx)
	t.Cleanup(func() { gw.Close(); live.Close() })
	return serveGateway(t, ctx, gw, srv)
}

// openGateway makes a gateway of opts and the live index (keywords and
// the built-in embedder's vectors, in memory) that follows it, as serve
// does; the gateway is not started.
func openGateway(ctx context.Context, opts gateway.Options) (*gateway.Gateway, *search.Live, error) {
	store, err := store.Open("")
	if err != nil {
		return nil, nil, err
	}
	live, _, err := search.Open(ctx, search.LiveOptions{Store: store, Embedder: embed.NewBuiltin(embed.BuiltinOptions{})}, nil)
	if err != nil {
		return nil, nil, err
	}
	if opts.WordFrequency == nil {
		opts.WordFrequency = search.WordFrequency // as cmd does
	}
	gw := gateway.New(opts)
	live.Follow(ctx, gw, search.FollowOptions{})
	return gw, live, nil
}

// serveGateway connects a client to srv, a server over gw, on in-memory
// transports, closed when the test ends.
func serveGateway(t testing.TB, ctx context.Context, gw *gateway.Gateway, srv *Server) *gatewayEnv {
	t.Helper()
	env := &gatewayEnv{gw: gw, srv: srv, progress: make(chan any, 100)}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := env.srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { env.listChanged.Add(1) },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			env.progress <- req.Params.ProgressToken
		},
	})
	env.cs, err = client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.cs.Close() })
	return env
}

// waitFor polls cond until it holds or 30 s pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *gatewayEnv) hasTool(name string) bool { return e.srv.eng.Catalog().Tool(name) != nil }

func npmBin(t *testing.T, name string) string {
	t.Helper()
	p, _ := filepath.Abs(filepath.Join("..", "node_modules", ".bin", name))
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed: run npm ci (make test does)", name)
		}
		t.Skipf("%s is not installed: run npm ci (make test does)", name)
	}
	return p
}

// TestGatewayReferenceServers: behind the package's gateway to the three
// reference servers (referenceGateway), discover_tools finds tools of
// each and execute_tool runs them. What it writes, an entity of memory's
// graph and a file of the filesystem's root, no other test there lists
// or reads.
func TestGatewayReferenceServers(t *testing.T) {
	t.Parallel()
	env := referenceGateway(t, Exposure{Mode: ExposeMeta})
	root := referenceShared.root
	// The upstream servers' own instructions reach a client that
	// initializes now, bounded (issue 35 item 5): everything's start
	// with a Markdown heading, shown without its marks.
	if got := connect(t, env.srv).InitializeResult().Instructions; !strings.Contains(got, "\n- everything: Everything Server") {
		t.Errorf("instructions after the servers listed their tools = %q, want everything's own relayed", got)
	}

	// Discover across all three.
	res := call(t, env.cs, DiscoverTools, map[string]any{})
	var toc Contents
	json.Unmarshal([]byte(text(res)), &toc)
	if len(toc.Domains) != 3 || toc.TotalTools < 30 {
		t.Errorf("contents = %+v, want 3 domains", toc)
	}
	for q, want := range map[string]string{
		"create entities in the knowledge graph": "memory__",
		"write text to a file on disk":           "filesystem__",
		"add two numbers":                        "everything__get-sum",
	} {
		res := call(t, env.cs, DiscoverTools, map[string]any{"query": q, "limit": 3})
		if !strings.Contains(text(res), `"name":"`+want) {
			t.Errorf("discover %q = %s, want %s among the top 3", q, text(res), want)
		}
	}

	// Memory: create entities, read them back.
	res = call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "memory__create_entities", "arguments": map[string]any{
		"entities": []any{map[string]any{"name": "Ana", "entityType": "person", "observations": []any{"leads project Atlas"}}}}})
	if res.IsError {
		t.Fatalf("create_entities: %s", text(res))
	}
	res = call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "memory__open_nodes", "arguments": map[string]any{"names": []any{"Ana"}}})
	if res.IsError || !strings.Contains(text(res), "leads project Atlas") {
		t.Errorf("open_nodes = %s, want the observation back", text(res))
	}

	// Filesystem: write then read a file in the temp dir.
	file := filepath.Join(root, "note.txt")
	res = call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "filesystem__write_file", "arguments": map[string]any{"path": file, "content": "hello from toolscout"}})
	if res.IsError {
		t.Fatalf("write_file: %s", text(res))
	}
	if b, _ := os.ReadFile(file); string(b) != "hello from toolscout" {
		t.Errorf("file holds %q", b)
	}
	res = call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "filesystem__read_text_file", "arguments": map[string]any{"path": file}})
	if res.IsError || !strings.Contains(text(res), "hello from toolscout") {
		t.Errorf("read_text_file = %s", text(res))
	}

	// Everything: non-text content, structured content and resource links
	// pass through exactly as the upstream sends them.
	direct := directClient(t, npmBin(t, "mcp-server-everything"))
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"get-tiny-image", map[string]any{}},
		{"get-structured-content", map[string]any{"location": "New York"}},
		{"get-resource-links", map[string]any{"count": 2}},
		{"get-annotated-message", map[string]any{"messageType": "error", "includeImage": true}},
		// An error result: the server fetches a loopback port nobody listens on.
		{"gzip-file-as-resource", map[string]any{"name": "x.gz", "data": "http://127.0.0.1:1/nothing"}},
	} {
		want, err := direct.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatal(err)
		}
		got := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "everything__" + tc.tool, "arguments": tc.args})
		// Compare what the tool said; _meta and resultType belong to each
		// server's protocol envelope.
		wj, _ := json.Marshal(payload(want))
		gj, _ := json.Marshal(payload(got))
		if string(wj) != string(gj) {
			t.Errorf("%s through toolscout:\n%s\nstraight from the server:\n%s", tc.tool, gj, wj)
		}
		if tc.tool == "gzip-file-as-resource" && !got.IsError {
			t.Errorf("%s: want the upstream's error result, got %s", tc.tool, gj)
		}
	}
}

func payload(r *mcp.CallToolResult) any {
	return map[string]any{"content": r.Content, "structuredContent": r.StructuredContent, "isError": r.IsError}
}

// directClient connects straight to an upstream, to compare results.
func directClient(t *testing.T, bin string, args ...string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: exec.Command(bin, args...)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // as the gateway connects
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestGatewayProgressAndCancellation: on the package's gateway to the
// reference servers (referenceGateway), progress of an everything call
// reaches the client that made it, and a cancelled call ends at once
// with the upstream usable after it.
func TestGatewayProgressAndCancellation(t *testing.T) {
	t.Parallel()
	env := referenceGateway(t, Exposure{Mode: ExposeMeta})
	waitFor(t, "tools", func() bool { return env.hasTool("everything__trigger-long-running-operation") })

	// Progress notifications reach the client under the client's own token.
	params := &mcp.CallToolParams{Name: ExecuteTool, Arguments: map[string]any{
		"tool_name": "everything__trigger-long-running-operation", "arguments": map[string]any{"duration": 0.6, "steps": 3}}}
	params.SetProgressToken("client-token-7")
	res, err := env.cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("long-running operation: %v %v", err, res)
	}
	// Notifications are handled asynchronously: give them a moment.
	got := 0
	deadline := time.After(5 * time.Second)
	for got < 3 {
		select {
		case tok := <-env.progress:
			if tok != "client-token-7" {
				t.Errorf("progress token %v, want the client's", tok)
			}
			got++
		case <-deadline:
			t.Fatalf("%d progress notifications reached the client, want 3", got)
		}
	}

	// Cancelling the call ends it at once; the upstream stays usable.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = env.cs.CallTool(ctx, &mcp.CallToolParams{Name: ExecuteTool, Arguments: map[string]any{
		"tool_name": "everything__trigger-long-running-operation", "arguments": map[string]any{"duration": 20, "steps": 2}}})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("cancelled call returned %v after %s", err, time.Since(start))
	}
	res = call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "everything__get-sum", "arguments": map[string]any{"a": 1, "b": 2}})
	if res.IsError || !strings.Contains(text(res), "3") {
		t.Errorf("get-sum after a cancelled call = %s", text(res))
	}
}

// TestGatewayStreamableHTTPUpstream: an upstream over Streamable HTTP,
// the package's everything server (everythingHTTP), is listed and runs.
func TestGatewayStreamableHTTPUpstream(t *testing.T) {
	t.Parallel()
	url := everythingHTTP(t)
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "remote", URL: url, Headers: map[string]string{"X-Test": "1"}}}, Exposure{Mode: ExposeMeta})
	waitFor(t, "the remote server's tools", func() bool { return env.hasTool("remote__get-sum") })
	res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "remote__get-sum", "arguments": map[string]any{"a": 2, "b": 3}})
	if res.IsError || !strings.Contains(text(res), "5") {
		t.Errorf("get-sum over Streamable HTTP = %s", text(res))
	}
}

// shoutServer is a go-sdk server with one tool, shout, which upper-cases
// a word.
func shoutServer(name string, opts *mcp.ServerOptions) *mcp.Server {
	up := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, opts)
	mcp.AddTool(up, &mcp.Tool{Name: "shout", Description: "Upper-case a word."}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		Word string `json:"word"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(in.Word)}}}, nil, nil
	})
	return up
}

// checkShout waits for domain's shout tool and runs it through the
// gateway.
func checkShout(t *testing.T, env *gatewayEnv, domain string) {
	t.Helper()
	name := domain + "__shout"
	waitFor(t, name, func() bool { return env.hasTool(name) })
	if res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": name, "arguments": map[string]any{"word": "hi"}}); res.IsError || text(res) != "HI" {
		t.Errorf("%s = %v %s, want HI", name, res.IsError, text(res))
	}
}

func TestGatewaySSEUpstreamFallback(t *testing.T) {
	t.Parallel()
	// A go-sdk server that only speaks the old SSE transport: with no
	// "type", toolscout tries Streamable HTTP first, then SSE.
	up := shoutServer("sse-only", nil)
	hs := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(hs.Close)
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "old", URL: hs.URL, ConnectTimeout: 10 * time.Second}}, Exposure{Mode: ExposeMeta})
	checkShout(t, env, "old")
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestGatewayFaults(t *testing.T) {
	t.Parallel()
	hang := fakeConfig(t, "hang", "hang")
	hang.ConnectTimeout = time.Second
	env := startGateway(t, []gateway.UpstreamConfig{hang, fakeConfig(t, "fake", "ok"), fakeConfig(t, "broken", "broken")}, Exposure{Mode: ExposeMeta})
	waitFor(t, "the working fakes", func() bool { return env.hasTool("fake__echo") && env.hasTool("broken__echo") })

	// A server that never answers initialize: down with the reason, never
	// blocking the others.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	env.gw.WaitReady(ctx)
	cancel()
	for _, st := range env.gw.Upstreams().Status() {
		if st.Domain == "hang" && (st.State != "down" || st.Err == nil || !strings.Contains(st.Err.Error(), "no answer within 1s")) {
			t.Errorf("hang status = %+v, want down with a timeout", st)
		}
	}

	// Broken schemas: a missing type is mended, a missing schema becomes an
	// empty object schema, a string schema is skipped with a reason.
	cat := env.srv.eng.Catalog()
	if tl := cat.Tool("broken__no_type"); tl == nil || !strings.Contains(string(tl.InputSchema()), `"type":"object"`) {
		t.Errorf("no_type = %v, want it indexed with type object", tl)
	}
	if tl := cat.Tool("broken__no_schema"); tl == nil || string(tl.InputSchema()) != `{"type":"object"}` {
		t.Errorf("no_schema = %v", tl)
	}
	if cat.Tool("broken__string_schema") != nil {
		t.Error("string_schema was indexed")
	}
	for _, st := range env.gw.Upstreams().Status() {
		if st.Domain == "broken" && (len(st.Skipped) != 1 || !strings.Contains(st.Skipped[0], "string_schema")) {
			t.Errorf("broken status skipped = %v", st.Skipped)
		}
	}

	// Results pass through, _meta cleared; isError passes through.
	res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__echo", "arguments": map[string]any{"text": "hi"}})
	if res.IsError || text(res) != "hi" || structured(t, res) != `{"echoed":"hi"}` || res.Meta["fake"] != nil {
		t.Errorf("echo = %v %q %s meta %v", res.IsError, text(res), structured(t, res), res.Meta)
	}
	res = call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__fail"})
	if !res.IsError || text(res) != "upstream says no" {
		t.Errorf("fail = %v %q, want the upstream's error result untouched", res.IsError, text(res))
	}

	// list_changed: a tool added upstream becomes discoverable without a restart.
	res = call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__add_tool"})
	if res.IsError {
		t.Fatal(text(res))
	}
	waitFor(t, "the tool announced by list_changed", func() bool { return env.hasTool("fake__second") })
	res = call(t, env.cs, DiscoverTools, map[string]any{"query": "klingon poetry", "limit": 1})
	if !strings.Contains(text(res), "fake__second") {
		t.Errorf("discover after list_changed = %s", text(res))
	}

	// A crash mid-call: an error result, the server restarted, its tools
	// kept discoverable meanwhile, then working again.
	res = call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__crash"})
	if !res.IsError || !strings.Contains(text(res), "stopped during the call") {
		t.Errorf("crash = %v %q, want the server named as stopped", res.IsError, text(res))
	}
	if !env.hasTool("fake__echo") {
		t.Error("the crashed server's tools left the catalog")
	}
	res = call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "broken__echo", "arguments": map[string]any{"text": "still here"}})
	if res.IsError {
		t.Errorf("another domain failed while one crashed: %s", text(res))
	}
	waitFor(t, "the crashed server to restart", func() bool {
		res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__echo", "arguments": map[string]any{"text": "back"}})
		return !res.IsError && text(res) == "back"
	})
	res = call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "hang__anything"})
	if !res.IsError {
		t.Errorf("a tool of a server that never connected ran: %s", text(res))
	}
}

func TestExposureModes(t *testing.T) {
	t.Parallel()
	list := func(env *gatewayEnv) []string {
		res, err := env.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return toolNames(res)
	}
	meta := []string{"discover_tools", "execute_tool", "get_tool_schema"}

	t.Run("meta", func(t *testing.T) {
		t.Parallel()
		env := startGateway(t, []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok")}, Exposure{Mode: ExposeMeta})
		waitFor(t, "tools", func() bool { return env.hasTool("fake__echo") })
		if got := list(env); !reflect.DeepEqual(got, meta) {
			t.Errorf("tools/list = %v, want %v", got, meta)
		}
	})
	t.Run("eager", func(t *testing.T) {
		t.Parallel()
		env := startGateway(t, []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok")}, Exposure{Mode: ExposeEager})
		waitFor(t, "tools listed", func() bool { return len(list(env)) == 7 })
		want := []string{"discover_tools", "execute_tool", "fake__add_tool", "fake__crash", "fake__echo", "fake__fail", "get_tool_schema"}
		if got := list(env); !reflect.DeepEqual(got, want) {
			t.Errorf("tools/list = %v, want %v", got, want)
		}
		res := call(t, env.cs, "fake__echo", map[string]any{"text": "direct"})
		if res.IsError || text(res) != "direct" {
			t.Errorf("direct call = %v %q", res.IsError, text(res))
		}
		res = call(t, env.cs, "fake__echo", map[string]any{})
		if !res.IsError || !strings.Contains(text(res), "text") {
			t.Errorf("direct call without a required argument = %v %q", res.IsError, text(res))
		}
		// A tool added upstream is listed too, and the client is told (a
		// client that lists the new tools before the notice comes needs
		// none: it is told only when it has not listed since).
		before := env.listChanged.Load()
		call(t, env.cs, "fake__add_tool", map[string]any{})
		waitFor(t, "list_changed", func() bool { return env.listChanged.Load() > before })
		if got := list(env); len(got) != 8 {
			t.Errorf("tools/list after list_changed = %v, want fake__second too", got)
		}
	})
	t.Run("core", func(t *testing.T) {
		t.Parallel()
		env := startGateway(t, []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok")}, Exposure{Mode: ExposeCore, Pinned: []string{"fake__e*", "fake__fail"}})
		waitFor(t, "pinned tools listed", func() bool { return len(list(env)) == 5 })
		want := []string{"discover_tools", "execute_tool", "fake__echo", "fake__fail", "get_tool_schema"}
		if got := list(env); !reflect.DeepEqual(got, want) {
			t.Errorf("tools/list = %v, want %v", got, want)
		}
		res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__add_tool"})
		if res.IsError {
			t.Errorf("an unpinned tool is not callable through execute_tool: %s", text(res))
		}
	})
	t.Run("dynamic", func(t *testing.T) {
		t.Parallel()
		env := startGateway(t, []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok"), fakeConfig(t, "other", "ok")}, Exposure{Mode: ExposeDynamic})
		waitFor(t, "tools", func() bool { return env.hasTool("fake__echo") && env.hasTool("other__echo") })
		base := []string{"disable_domain", "discover_tools", "enable_domain", "execute_tool", "get_tool_schema"}
		if got := list(env); !reflect.DeepEqual(got, base) {
			t.Fatalf("tools/list = %v, want %v", got, base)
		}
		before := env.listChanged.Load()
		res := call(t, env.cs, EnableDomain, map[string]any{"domain": "fake"})
		if res.IsError || !strings.Contains(text(res), `"enabled":["fake"]`) || !strings.Contains(text(res), "fake__echo") {
			t.Fatalf("enable_domain = %s", text(res))
		}
		waitFor(t, "list_changed after enable_domain", func() bool { return env.listChanged.Load() > before })
		if got := list(env); len(got) != 9 || !strings.Contains(strings.Join(got, ","), "fake__echo") || strings.Contains(strings.Join(got, ","), "other__") {
			t.Errorf("tools/list after enabling fake = %v", got)
		}
		res = call(t, env.cs, "fake__echo", map[string]any{"text": "enabled"})
		if res.IsError || text(res) != "enabled" {
			t.Errorf("enabled tool call = %s", text(res))
		}
		before = env.listChanged.Load()
		call(t, env.cs, DisableDomain, map[string]any{"domain": "fake"})
		waitFor(t, "list_changed after disable_domain", func() bool { return env.listChanged.Load() > before })
		if got := list(env); !reflect.DeepEqual(got, base) {
			t.Errorf("tools/list after disabling = %v", got)
		}
		res = call(t, env.cs, EnableDomain, map[string]any{"domain": "nope"})
		if !res.IsError || !strings.Contains(text(res), "valid domains: fake, other") {
			t.Errorf("enable unknown domain = %s", text(res))
		}
	})
}

func TestFirstCallWaitsForStartup(t *testing.T) {
	t.Parallel()
	hang := fakeConfig(t, "hang", "hang")
	hang.ConnectTimeout = time.Second
	start := time.Now()
	env := startGateway(t, []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok"), hang}, Exposure{Mode: ExposeMeta})
	// No waiting here: the first call itself waits for the startup round.
	res := call(t, env.cs, DiscoverTools, map[string]any{"query": "echo the text back", "limit": 1})
	if !strings.Contains(text(res), "fake__echo") {
		t.Errorf("first discover = %s, want the upstream's tool", text(res))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("first call took %s: the hanging server should cost at most its 1 s connect timeout", d)
	}
}

func TestDynamicModeIsPerHTTPSession(t *testing.T) {
	t.Parallel()
	env := startGateway(t, []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok")}, Exposure{Mode: ExposeDynamic})
	waitFor(t, "tools", func() bool { return env.hasTool("fake__echo") })
	hs := httptest.NewServer(env.srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	connectHTTP := func() *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "http", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: hs.URL}, sessionOpts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	count := func(cs *mcp.ClientSession) int {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Tools)
	}
	a, b := connectHTTP(), connectHTTP()
	views := env.srv.ViewCount()
	for i := 0; i < 30; i++ {
		call(t, a, DiscoverTools, map[string]any{"query": "echo", "limit": 1})
	}
	if n := env.srv.ViewCount(); n != views {
		t.Errorf("30 calls on one session took the views from %d to %d: want one view per session", views, n)
	}
	if res := call(t, a, EnableDomain, map[string]any{"domain": "fake"}); res.IsError {
		t.Fatal(text(res))
	}
	if na, nb := count(a), count(b); na != 9 || nb != 5 {
		t.Errorf("after A enabled fake: A lists %d tools, B %d; want 9 and 5", na, nb)
	}
	if res := call(t, a, "fake__echo", map[string]any{"text": "a"}); res.IsError || text(res) != "a" {
		t.Errorf("A's direct call = %s", text(res))
	}
	// A tool added upstream reaches the session that enabled its domain.
	call(t, a, "fake__add_tool", map[string]any{})
	waitFor(t, "second listed for A", func() bool { return count(a) == 10 })
	if nb := count(b); nb != 5 {
		t.Errorf("B lists %d tools after the upstream changed, want 5", nb)
	}
}
