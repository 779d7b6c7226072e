package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"

	"github.com/toolscout/toolscout/server/boot"
	"github.com/toolscout/toolscout/server/gateway"
)

// emptyLive returns a Live index with nothing loaded yet: a server at
// its first moment.
func emptyLive(t *testing.T) *search.Live { return emptyLiveKnowing(t, nil) }

// emptyLiveKnowing is emptyLive with the domains a source listed last
// time (search.LiveOptions.Known), for Load to index.
func emptyLiveKnowing(t *testing.T, known []index.DomainSpec) *search.Live {
	t.Helper()
	store, err := store.Open("")
	if err != nil {
		t.Fatal(err)
	}
	live, err := search.NewLive(search.LiveOptions{Store: store, Known: known})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	return live
}

func specsOf(t *testing.T, js string) []index.DomainSpec {
	t.Helper()
	specs, err := index.ParseCatalog("test", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

// lister is a client that acts like Claude Desktop: it lists the tools
// right after initialize and again after each tools/list_changed,
// recording how many tools each list had.
type lister struct {
	cs       *mcp.ClientSession
	mu       sync.Mutex
	sizes    []int
	notices  atomic.Int32
	progress chan *mcp.ProgressNotificationParams
	relist   chan struct{}
}

func connectLister(t *testing.T, srv *Server) *lister {
	t.Helper()
	l := &lister{progress: make(chan *mcp.ProgressNotificationParams, 100), relist: make(chan struct{}, 100)}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			l.notices.Add(1)
			l.relist <- struct{}{}
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			l.progress <- req.Params
		},
	})
	// Each list asks the server. The go-sdk's client keeps a tools/list
	// answer for its ttlMs (SEP-2549), and also keeps one that was on
	// its way when a tools/list_changed emptied the cache: the relist
	// for that notice was answered from the cache, with the tools from
	// before the change (1 run in about 10 beside two busy loops).
	client.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.ListToolsResult); ok {
				r.TTLMs = 0
			}
			return res, err
		}
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	if l.cs, err = client.Connect(context.Background(), ct, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.cs.Close() })
	done := make(chan struct{})
	t.Cleanup(func() { close(done) }) // before the session's Close: cleanups run last first
	go func() {
		for {
			select {
			case <-l.relist:
				l.list(nil)
			case <-done:
				return
			}
		}
	}()
	return l
}

// list lists the tools (params may carry a progress token) and records
// the count.
func (l *lister) list(params *mcp.ListToolsParams) (int, error) {
	res, err := l.cs.ListTools(context.Background(), params)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	l.sizes = append(l.sizes, len(res.Tools))
	l.mu.Unlock()
	return len(res.Tools), nil
}

func (l *lister) lists() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.sizes...)
}

// waitList waits until some list had n tools.
func (l *lister) waitList(t *testing.T, n int) {
	t.Helper()
	waitFor(t, "a list of all the tools", func() bool {
		for _, s := range l.lists() {
			if s == n {
				return true
			}
		}
		return false
	})
}

// listChanges follows the tools/list_changed notifications that the
// go-sdk makes for a server's primary view (debounced: 10 ms after the
// last tool added or removed) as they reach listSync, which holds, drops
// or passes each; and it counts the tools the view adds (addToolHook).
type listChanges struct {
	added   atomic.Int64 // tools added
	done    atomic.Int64 // tools added whose hook (and pause) returned
	mu      sync.Mutex
	came    []int64 // per notification listSync handled: done when it came
	settled int64   // added at the last settle
}

// watchListChanges starts following srv's primary view; pause, when not
// nil, runs after the view adds its nth tool.
func watchListChanges(t *testing.T, srv *Server, pause func(n int64)) *listChanges {
	t.Helper()
	w := &listChanges{}
	hook := func() {
		n := w.added.Add(1)
		if pause != nil {
			pause(n)
		}
		w.done.Store(n)
	}
	srv.expo.addToolHook.Store(&hook)
	t.Cleanup(func() { srv.expo.addToolHook.Store(nil) })
	// Added last, so it runs first: it sees every notification the go-sdk
	// makes, before listSync.
	srv.views.primary.mcp.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != notificationToolListChanged {
				return next(ctx, method, req)
			}
			done := w.done.Load()
			res, err := next(ctx, method, req)
			w.mu.Lock()
			w.came = append(w.came, done)
			w.mu.Unlock()
			return res, err
		}
	})
	return w
}

// settle waits, after a change of the view that added two tools or more
// and has ended, until what could still announce it has happened: the
// go-sdk's notification for the change's last tool has been through
// listSync (held, dropped or passed), and the client l has handled every
// message sent before that (a progress notification sent after it has
// come back: the client handles notifications in order). What l has
// counted then is all the change brings it, without sleeping for "room
// for a late notification". The go-sdk's notification for the last tool
// comes after that tool was added, so after the hook of the tool before
// it returned; one of an earlier tool comes before, during that hook's
// pause at the latest.
func (w *listChanges) settle(t *testing.T, srv *Server, l *lister) {
	t.Helper()
	last := w.added.Load()
	if last-w.settled < 2 {
		t.Fatalf("settle after a change of %d tools, want 2 or more", last-w.settled)
	}
	w.settled = last
	waitFor(t, "the go-sdk's tools/list_changed for the change's last tool", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return slices.ContainsFunc(w.came, func(done int64) bool { return done >= last-1 })
	})
	var sessions []*mcp.ServerSession
	for ss := range srv.views.primary.mcp.Sessions() {
		sessions = append(sessions, ss)
	}
	if len(sessions) != 1 {
		t.Fatalf("%d sessions on the view, want the lister's alone", len(sessions))
	}
	token := fmt.Sprintf("settled after %d tools", last)
	if err := sessions[0].NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1}); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case p := <-l.progress:
			if p.ProgressToken == token {
				return
			}
		case <-timeout:
			t.Fatal("the client did not get a progress notification in 10 s")
		}
	}
}

// TestFirstListIsComplete: in eager, core, auto and compact mode, a client that lists
// the tools before the index has loaded gets the whole list once it has
// (not the meta-tools alone); a call of a directly listed tool made then
// waits too, instead of failing as an unknown tool.
func TestFirstListIsComplete(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		exp  Exposure
		want int
	}{
		{"eager", Exposure{Mode: ExposeEager}, 3 + 5},
		{"core", Exposure{Mode: ExposeCore, Pinned: []string{"github__*"}}, 3 + 3},
		{"auto", Exposure{Mode: ExposeAuto}, 3 + 5},
		{"compact", Exposure{Mode: ExposeCompact}, 3 + 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := emptyLive(t)
			l := connectLister(t, New(Options{Live: live, Expose: tc.exp}))
			first := make(chan int, 1)
			go func() {
				n, err := l.list(nil)
				if err != nil {
					t.Error(err)
				}
				first <- n
			}()
			called := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, err := l.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "github__list_issues", Arguments: map[string]any{}})
				if err != nil {
					t.Errorf("a call of github__list_issues before the index loaded: %v, want it to wait", err)
				}
				called <- res
			}()
			if _, err := live.Load(context.Background(), specsOf(t, testCatalog), nil, nil); err != nil {
				t.Fatal(err)
			}
			if n := <-first; n != tc.want {
				t.Errorf("first tools/list = %d tools, want all %d", n, tc.want)
			}
			if res := <-called; res != nil && !strings.Contains(text(res), "cannot run here") {
				t.Errorf("call of github__list_issues = %s, want the catalog-only answer", text(res))
			}
		})
	}
}

// TestLongWaitsAreTold: a tools/list that waits sends progress
// notifications with its progress token, each larger than the last and
// saying what it waits for; one without a token is logged instead.
func TestLongWaitsAreTold(t *testing.T) {
	t.Parallel()
	live := emptyLive(t)
	logs := &logBuffer{}
	l := connectLister(t, New(Options{Live: live, Expose: Exposure{Mode: ExposeEager}, Logger: logs.logger()}))
	listed := make(chan int, 2)
	go func() {
		n, _ := l.list(&mcp.ListToolsParams{Meta: mcp.Meta{"progressToken": "first-list"}})
		listed <- n
	}()
	go func() {
		n, _ := l.list(nil)
		listed <- n
	}()
	var got []*mcp.ProgressNotificationParams
	for len(got) < 2 {
		select {
		case p := <-l.progress:
			got = append(got, p)
		case <-time.After(10 * time.Second):
			t.Fatalf("no progress notification 10 s into a tools/list that waits (got %d)", len(got))
		}
	}
	for i, p := range got {
		if p.ProgressToken != "first-list" || !strings.Contains(p.Message, "index to load") || i > 0 && p.Progress <= got[i-1].Progress {
			t.Errorf("progress notification %d = %+v, want token first-list, increasing progress and what it waits for", i, p)
		}
	}
	waitFor(t, "a log line for the list without a token", func() bool { return len(logs.records("tools/list waits")) > 0 })
	if _, err := live.Load(context.Background(), specsOf(t, testCatalog), nil, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if n := <-listed; n != 8 {
			t.Errorf("a tools/list that waited = %d tools, want 8", n)
		}
	}
}

// TestListChangedOncePerChange: a change of many tools that pauses in
// the middle (a busy machine) is announced once, and no client lists
// part of it.
func TestListChangedOncePerChange(t *testing.T) {
	t.Parallel()
	live := emptyLive(t)
	srv := New(Options{Live: live, Expose: Exposure{Mode: ExposeEager}})
	// A pause after every 25th tool, and after the first of the second
	// change's two.
	w := watchListChanges(t, srv, func(added int64) {
		if added%25 == 0 || added == 201 {
			time.Sleep(15 * time.Millisecond) // longer than the go-sdk's 10 ms debounce
		}
	})
	l := connectLister(t, srv)
	if _, err := live.Load(context.Background(), specsOf(t, manyDomains(100)), nil, nil); err != nil {
		t.Fatal(err)
	}
	l.list(nil)
	l.waitList(t, 203)
	w.settle(t, srv, l)
	for _, n := range l.lists() {
		if n != 203 {
			t.Errorf("lists = %v, want every one whole (203 tools)", l.lists())
			break
		}
	}
	if n := l.notices.Load(); n > 1 {
		t.Errorf("%d tools/list_changed for one change, want at most 1", n)
	}
	// The next change is announced again, once.
	before := l.notices.Load()
	if _, err := live.Update(context.Background(), specsOf(t, manyDomains(101))); err != nil {
		t.Fatal(err)
	}
	l.waitList(t, 205)
	w.settle(t, srv, l)
	if n := l.notices.Load() - before; n != 1 {
		t.Errorf("%d tools/list_changed for the second change, want 1", n)
	}
}

// TestFallbackFirstListIsComplete: with the eager fallback, the first
// tools/list waits until the load ends; when the index cannot load, it
// is every tool, not the meta-tools alone.
func TestFallbackFirstListIsComplete(t *testing.T) {
	t.Parallel()
	live := emptyLive(t)
	rd := boot.NewReadiness()
	srv := New(Options{Live: live, Fallback: string(ExposeEager), Readiness: rd})
	l := connectLister(t, srv)
	first := make(chan int, 1)
	go func() {
		n, _ := l.list(nil)
		first <- n
	}()
	cat, err := index.NewCatalog(specsOf(t, testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	live.UseCatalog(cat) // what serve does when the index fails to load
	srv.FallBackToEager("the index could not load")
	rd.Advance(boot.Settled)
	if n := <-first; n != 8 {
		t.Errorf("first tools/list with the fallback = %d tools, want all 8", n)
	}
}

// knownEnv is a server over upstreams whose tools are known from their
// last run.
type knownEnv struct {
	srv  *Server
	gw   *gateway.Gateway
	live *search.Live
	// refreshes counts the live index's refreshes after it loaded the
	// known tools, each counted once the server's view has taken it in.
	refreshes atomic.Int32
	// changes follows the changes of the server's view from the start.
	changes *listChanges
}

// knownGateway serves upstreams whose tools are known from their last
// run, as `toolscout serve --config` does on a data dir that has them:
// the live index loads them first, then follows the gateway.
func knownGateway(t *testing.T, opts gateway.Options, exp Exposure) *knownEnv {
	t.Helper()
	return knownGatewayServer(t, opts, Options{Expose: exp})
}

// knownGatewayServer is knownGateway with the server's options (their
// Live and Executor are the gateway's).
func knownGatewayServer(t *testing.T, opts gateway.Options, so Options) *knownEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if opts.MinBackoff == 0 {
		opts.MinBackoff, opts.MaxBackoff = 100*time.Millisecond, 500*time.Millisecond
	}
	opts.WordFrequency = search.WordFrequency // as cmd does
	gw := gateway.New(opts)
	live := emptyLiveKnowing(t, gw.Specs())
	e := &knownEnv{gw: gw, live: live}
	if _, err := live.Load(ctx, nil, embed.NewBuiltin(embed.BuiltinOptions{}), nil); err != nil {
		t.Fatal(err)
	}
	so.Live, so.Executor = live, e.gw
	e.srv = New(so)
	e.changes = watchListChanges(t, e.srv, nil)
	live.Subscribe(func() { e.refreshes.Add(1) }) // after the server's own: its view is synced first
	live.Follow(ctx, e.gw, search.FollowOptions{})
	// The known tools are indexed (the live index's first refresh) before
	// the servers start, which take longer than that in serve, so that a
	// test knows its refreshes: that one, then one per change a server
	// lists.
	select {
	case <-live.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("the live index did not take in the known tools in 30 s")
	}
	e.gw.Start(ctx)
	t.Cleanup(e.gw.Close) // before the live index closes: cleanups run last first
	return e
}

// fakeKnown is what a fake upstream lists, as its last run would have
// kept it (drop leaves out the tools named).
func fakeKnown(t *testing.T, domain string, drop ...string) index.ListedTools {
	t.Helper()
	listed, err := fakeListed(t)
	if err != nil {
		t.Fatal(err)
	}
	var tools []index.ToolSpec // a copy of its own for each test
	if err := json.Unmarshal(listed, &tools); err != nil {
		t.Fatal(err)
	}
	k := index.ListedTools{Domain: domain, Title: "fake-ok"}
	for _, tl := range tools {
		if !strings.Contains(" "+strings.Join(drop, " ")+" ", " "+tl.Name+" ") {
			k.Tools = append(k.Tools, tl)
		}
	}
	return k
}

// fakeListed is the tools a fake upstream in mode ok lists (JSON), asked
// of one once per test binary: what it lists does not depend on its
// domain, and each start of the fake is a process.
var fakeListed = func() func(t *testing.T) ([]byte, error) {
	var (
		once   sync.Once
		listed []byte
		err    error
	)
	return func(t *testing.T) ([]byte, error) {
		once.Do(func() {
			gw := gateway.New(gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok")}})
			gw.Start(context.Background())
			gw.WaitReady(context.Background())
			defer gw.Close()
			specs := gw.Specs()
			if len(specs) != 1 {
				err = fmt.Errorf("the fake upstream listed no tools: %+v", gw.Upstreams().Status())
				return
			}
			listed, err = json.Marshal(specs[0].Tools)
		})
		return listed, err
	}
}()

// TestHeadStartFromKnownTools: with the tools its servers listed on
// their last run, a start answers discover_tools, get_tool_schema and
// tools/list from them before the servers connect, marks the servers as
// connecting, runs execute_tool once its server is up (waiting for it,
// with progress), and announces nothing when the servers list what they
// listed before; the data dir is written only for a change.
func TestHeadStartFromKnownTools(t *testing.T) {
	t.Parallel()
	known := fakeKnown(t, "slow")
	slow := fakeConfig(t, "slow", "ok")
	slow.Env["TOOLSCOUT_FAKE_DELAY"] = "2s"
	var keeps atomic.Int32
	logs := &logBuffer{}
	e := knownGateway(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{slow}, Known: []index.ListedTools{known}, Logger: logs.logger(),
		Keep: func([]index.ListedTools) error { keeps.Add(1); return nil }}, Exposure{Mode: ExposeEager})
	srv, gw := e.srv, e.gw
	l := connectLister(t, srv)
	if n, err := l.list(nil); err != nil || n != 3+len(known.Tools) {
		t.Errorf("first tools/list = %d tools (%v), want the %d known ones and the meta-tools", n, err, len(known.Tools))
	}
	listed := viewGen(srv) // the view's changes when the client listed
	var page Contents
	if err := json.Unmarshal([]byte(structured(t, call(t, l.cs, DiscoverTools, map[string]any{}))), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Domains) != 1 || page.Domains[0].ToolCount != len(known.Tools) || !strings.HasPrefix(page.Domains[0].Status, "connecting") {
		t.Errorf("contents before the server connected = %+v, want slow with its known tools, marked connecting", page.Domains)
	}
	if res := call(t, l.cs, DiscoverTools, map[string]any{"query": "echo the text back"}); !strings.Contains(text(res), "slow__echo") {
		t.Errorf("discover before the server connected = %s, want slow__echo", text(res))
	}
	if res := call(t, l.cs, GetToolSchema, map[string]any{"tool_name": "slow__echo"}); res.IsError {
		t.Errorf("get_tool_schema before the server connected = %s", text(res))
	}
	if st := gw.Upstreams().Status(); st[0].State != "connecting" {
		t.Fatalf("the slow server is %s already; the test needs it still starting", st[0].State)
	}
	res, err := l.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ExecuteTool, Meta: mcp.Meta{"progressToken": 7},
		Arguments: map[string]any{"tool_name": "slow__echo", "arguments": map[string]any{"text": "hi"}}})
	if err != nil || res.IsError || !strings.Contains(text(res), "hi") {
		t.Fatalf("execute_tool on a server still starting = %v, %v; want it to wait and run", res, err)
	}
	select {
	case p := <-l.progress:
		if !strings.Contains(p.Message, `server "slow"`) {
			t.Errorf("progress while waiting for the server = %+v", p)
		}
	default:
		t.Error("execute_tool waited 2 s for its server without a progress notification")
	}
	// What would set off a re-index, a write and a notification is the
	// gateway finding the server's tools changed: it says which it found.
	// And the live index's refresh at start, done once Ready, changed
	// nothing either: the view the client listed is the one served, so
	// there is nothing to announce, now or later.
	same, changed := "upstream lists the tools it listed on its last run", "upstream tools changed"
	waitFor(t, "the gateway to compare the server's tools with its last run's", func() bool {
		return len(logs.records(same))+len(logs.records(changed)) > 0
	})
	select {
	case <-e.live.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("the live index did not take in the upstream servers in 30 s")
	}
	if len(logs.records(changed)) > 0 || keeps.Load() != 0 {
		t.Errorf("the server listed what it listed last time, but the gateway found it changed (%d writes)", keeps.Load())
	}
	if n, gen := l.notices.Load(), viewGen(srv); n != 0 || gen != listed {
		t.Errorf("the server listed what it listed last time: %d tools/list_changed, the listing changed %d times; want none", n, gen-listed)
	}
}

// viewGen returns how many times the tools that srv's primary view lists
// changed.
func viewGen(srv *Server) uint64 {
	l := &srv.views.primary.sync
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gen
}

// TestCallWaitsWithinItsTimeout: a call of a tool whose server is still
// starting waits no longer than the tool's call timeout, then says the
// server is still starting (not unavailable, not unknown).
func TestCallWaitsWithinItsTimeout(t *testing.T) {
	t.Parallel()
	known := fakeKnown(t, "slow")
	slow := fakeConfig(t, "slow", "ok")
	slow.Env["TOOLSCOUT_FAKE_DELAY"] = "3s"
	slow.Timeout = 300 * time.Millisecond
	cs := connect(t, knownGateway(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{slow}, Known: []index.ListedTools{known}}, Exposure{Mode: ExposeMeta}).srv)
	res := call(t, cs, ExecuteTool, map[string]any{"tool_name": "slow__echo", "arguments": map[string]any{"text": "hi"}})
	if !res.IsError || !strings.Contains(text(res), `server "slow" is still starting`) || !strings.Contains(text(res), "300ms") {
		t.Errorf("execute_tool on a server starting for longer than the call's timeout = %s", text(res))
	}
}

// TestServerDownLastRunIsWaitedFor (issue 52, item 6): with one
// server's tools known from the last run and another that failed then
// (nothing kept of it), the server is not ready while that one is
// still connecting, and a call of one of its tools made meanwhile (a
// direct call, execute_tool, a run_code program's) waits for it and
// runs, instead of answering "still connecting, try again".
func TestServerDownLastRunIsWaitedFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		so   Options
		call func(t *testing.T, cs *mcp.ClientSession) (string, bool)
	}{
		{"direct call", Options{Expose: Exposure{Mode: ExposeEager}}, func(t *testing.T, cs *mcp.ClientSession) (string, bool) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "remote__echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil {
				return err.Error(), false
			}
			return text(res), !res.IsError
		}},
		{"execute_tool", Options{Expose: Exposure{Mode: ExposeMeta}}, func(t *testing.T, cs *mcp.ClientSession) (string, bool) {
			res := call(t, cs, ExecuteTool, map[string]any{"tool_name": "remote__echo", "arguments": map[string]any{"text": "hi"}})
			return text(res), !res.IsError
		}},
		{"run_code", Options{Expose: Exposure{Mode: ExposeCode}, Code: &Code{Runner: codeRunner(t)}}, func(t *testing.T, cs *mcp.ClientSession) (string, bool) {
			ans := codeAnswer(t, cs, `return await tools.remote.echo({text: "hi"})`)
			return string(ans.Result) + fmt.Sprint(ans.Error), ans.Error == nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each case waits most of its time for the remote server's
			// 2 s start.
			t.Parallel()
			remote := fakeConfig(t, "remote", "ok")
			remote.Env["TOOLSCOUT_FAKE_DELAY"] = "2s"
			e := knownGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "local", "ok"), remote},
				Known: []index.ListedTools{fakeKnown(t, "local")}}, tc.so)
			cs := connect(t, e.srv)
			if err := e.srv.Ready(); !errors.Is(err, ErrUpstreamsStarting) {
				t.Errorf("with a server in its first connection attempt: Ready() = %v, want %v", err, ErrUpstreamsStarting)
			}
			if e.live.Engine().Catalog().Domain("remote") != nil || len(e.gw.Upstreams().Connecting()) == 0 {
				t.Fatal("the remote server connected before the call; the test needs it still starting")
			}
			got, ok := tc.call(t, cs)
			if !ok || !strings.Contains(got, "hi") {
				t.Errorf("%s of a tool of a server still connecting = %s; want it to wait for the server and run", tc.name, got)
			}
			waitFor(t, "ready", func() bool { return e.srv.Ready() == nil })
		})
	}
}

// TestChangedUpstreamIsAnnouncedOnce: a server that lists other tools
// than on its last run is re-indexed, announced once and kept.
func TestChangedUpstreamIsAnnouncedOnce(t *testing.T) {
	t.Parallel()
	known := fakeKnown(t, "fake", "fail", "crash")
	var kept atomic.Value
	e := knownGateway(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok")}, Known: []index.ListedTools{known},
		Keep: func(l []index.ListedTools) error { kept.Store(l); return nil }}, Exposure{Mode: ExposeEager})
	l := connectLister(t, e.srv)
	first, _ := l.list(nil)
	waitFor(t, "the re-index", func() bool { return e.live.Engine().Catalog().Tool("fake__crash") != nil })
	l.waitList(t, first+2)
	// The live index refreshes twice: at start, with the known tools,
	// and after the gateway's one change; then nothing is left to
	// refresh, and settle waits out the change's notification.
	waitFor(t, "the live index's refreshes at start and after the change", func() bool { return e.refreshes.Load() >= 2 })
	e.changes.settle(t, e.srv, l)
	if n := l.notices.Load(); n != 1 {
		t.Errorf("%d tools/list_changed for one changed server, want 1 (lists %v)", n, l.lists())
	}
	got, _ := kept.Load().([]index.ListedTools)
	if len(got) != 1 || len(got[0].Tools) != len(known.Tools)+2 {
		t.Errorf("kept %+v, want the server's new list", got)
	}
}

// TestSlowServerConnects: a server slower to start than the old fixed
// 15 s connects within its own connect timeout (scaled down here: 2 s
// against 10 s), without holding up a fast one; one slower than its
// timeout is down with a reason, and its tools are said to be
// unavailable, not unknown.
func TestSlowServerConnects(t *testing.T) {
	t.Parallel()
	slow := fakeConfig(t, "slow", "ok")
	slow.Env["TOOLSCOUT_FAKE_DELAY"] = "2s"
	slow.ConnectTimeout = 10 * time.Second
	late := fakeConfig(t, "late", "ok")
	late.Env["TOOLSCOUT_FAKE_DELAY"] = "2s"
	late.ConnectTimeout = 300 * time.Millisecond
	env := startGatewayWith(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fast", "ok"), slow, late},
		MinBackoff: time.Hour, MaxBackoff: time.Hour}, Exposure{Mode: ExposeMeta})
	state := func(d string) string {
		for _, st := range env.gw.Upstreams().Status() {
			if st.Domain == d {
				return st.State
			}
		}
		return ""
	}
	waitFor(t, "the fast server", func() bool { return state("fast") == "up" })
	if s := state("slow"); s != "connecting" {
		t.Errorf("when the fast server was up the slow one was %s, want connecting", s)
	}
	waitFor(t, "the slow server", func() bool { return state("slow") == "up" })
	waitFor(t, "the server slower than its connect timeout to be down", func() bool { return state("late") == "down" })
	for _, st := range env.gw.Upstreams().Status() {
		if st.Domain == "late" && (st.Err == nil || !strings.Contains(st.Err.Error(), "no answer within 300ms")) {
			t.Errorf("late: %v, want the timeout named", st.Err)
		}
	}
	res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "late__echo", "arguments": map[string]any{"text": "x"}})
	if !res.IsError || !strings.Contains(text(res), `server "late" is unavailable`) || strings.Contains(text(res), "unknown tool") {
		t.Errorf("execute_tool on a server that never connected = %s, want it named unavailable", text(res))
	}
	res = call(t, env.cs, GetToolSchema, map[string]any{"tool_name": "late__echo"})
	if !res.IsError || !strings.Contains(text(res), "unavailable") {
		t.Errorf("get_tool_schema of a tool of a server that never connected = %s", text(res))
	}
}

// TestServersKnown: the first initialize waits for a server in its first
// connection attempt, or up with tools, whose tools the index does not
// hold; not for one whose tools it holds from the last run, nor for one
// that failed or lists none.
func TestServersKnown(t *testing.T) {
	t.Parallel()
	obj := json.RawMessage(`{"type":"object"}`)
	cat, err := index.NewCatalog([]index.DomainSpec{{Name: "memory", Tools: []index.ToolSpec{{Name: "read_graph", InputSchema: obj}}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		connecting []string
		status     []gateway.UpstreamStatus
		want       bool
	}{
		{"connecting, tools kept from the last run", []string{"memory"}, []gateway.UpstreamStatus{{Domain: "memory", State: "connecting"}}, true},
		{"connecting, tools not known", []string{"files"}, []gateway.UpstreamStatus{{Domain: "files", State: "connecting"}}, false},
		{"up, tools not indexed yet", nil, []gateway.UpstreamStatus{{Domain: "files", State: "up", Tools: 14}}, false},
		{"up, tools indexed", nil, []gateway.UpstreamStatus{{Domain: "memory", State: "up", Tools: 1}}, true},
		{"down after its first attempt", nil, []gateway.UpstreamStatus{{Domain: "files", State: "down"}}, true},
		{"up, no tools", nil, []gateway.UpstreamStatus{{Domain: "files", State: "up"}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := serversKnown(cat, tc.connecting, tc.status); got != tc.want {
				t.Errorf("serversKnown(%v, %+v) = %v, want %v", tc.connecting, tc.status, got, tc.want)
			}
		})
	}
}
