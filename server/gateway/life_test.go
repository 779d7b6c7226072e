package gateway

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
)

// TestUpstreamLifecycle: a stdio server is started, lists its tools
// (with its title and instructions), runs a call, and its result comes
// back without the server's _meta.
func TestUpstreamLifecycle(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	g.WaitReady(context.Background())
	if st := stateOf(g, "test"); st.State != "up" || st.Err != nil || st.Tools != 13 {
		t.Fatalf("Status = %+v, want up with 13 tools", st)
	}
	if got := g.Upstreams().Connecting(); len(got) != 0 {
		t.Errorf("Connecting() = %q after WaitReady, want none", got)
	}
	if got := g.Directory().Unavailable(); len(got) != 0 {
		t.Errorf("Unavailable() = %v, want none", got)
	}
	if got, want := toolNames(g, "test"), []string{"echo", "crash", "slow", "fail", "add_tool", "touch", "add_prompt", "ask", "roots", "progress", "big", "log", "elicit"}; !sameSet(got, want) {
		t.Errorf("tools = %q, want %q", got, want)
	}
	if got := g.Directory().Titles()["test"]; got != "Test Upstream" {
		t.Errorf("Titles()[test] = %q, want the server's title", got)
	}
	if got := g.Directory().Instructions()["test"]; !strings.HasPrefix(got, "A test server.") {
		t.Errorf("Instructions()[test] = %q, want the server's", got)
	}
	res, err := call(g, "test", "echo", map[string]any{"text": "hi"})
	if err != nil || resultText(res) != "echo: hi (start 1)" {
		t.Fatalf("echo = %q, %v; want its answer", resultText(res), err)
	}
	if res.Meta != nil {
		t.Errorf("the result's _meta = %v, want it dropped (the upstream's own)", res.Meta)
	}
}

// TestUpstreamRestarts: a server that exits in the middle of a call
// fails that call as stopped, is marked down, and is started again; its
// tools stay listed meanwhile, and the next call runs on the new
// process.
func TestUpstreamRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", dir)}})
	g.WaitReady(context.Background())
	_, err := call(g, "test", "crash", nil)
	if !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), `server "test" stopped during the call`) {
		t.Fatalf("crash = %v, want ErrStopped naming the server", err)
	}
	waitUntil(t, g, "a second start", func() bool { return starts(t, dir) >= 2 && stateOf(g, "test").State == "up" })
	if names := toolNames(g, "test"); !slices.Contains(names, "echo") {
		t.Errorf("tools after the restart = %q, want echo still listed", names)
	}
	res, err := call(g, "test", "echo", map[string]any{"text": "again"})
	if err != nil || !strings.HasPrefix(resultText(res), "echo: again (start ") || strings.HasSuffix(resultText(res), "(start 1)") {
		t.Fatalf("echo after the restart = %q, %v; want it run by a later start", resultText(res), err)
	}
}

// TestUpstreamDown: a server that cannot be started is down with the
// reason, said by Unavailable, Status and the error of a call of its
// tool (ErrUnavailable); other servers serve on.
func TestUpstreamDown(t *testing.T) {
	t.Parallel()
	missing := UpstreamConfig{Domain: "missing", Command: "/nonexistent/mcp-server", ConnectTimeout: 10 * time.Second}
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{missing, testUpstream(t, "test", "")}, MinBackoff: time.Hour})
	g.WaitReady(context.Background())
	why, down := g.Directory().Unavailable()["missing"]
	if !down || !strings.Contains(why, "/nonexistent/mcp-server") {
		t.Errorf("Unavailable()[missing] = %q, %v; want the reason naming the command", why, down)
	}
	if _, up := g.Directory().Unavailable()["test"]; up {
		t.Error("the test server is said unavailable too")
	}
	if st := stateOf(g, "missing"); st.State != "down" || st.Err == nil {
		t.Errorf("Status(missing) = %+v, want down with its error", st)
	}
	_, err := call(g, "missing", "anything", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "toolscout keeps reconnecting it. Tools of other domains still work") {
		t.Errorf("call on the down server = %v, want ErrUnavailable saying it is retried", err)
	}
	if res, err := call(g, "test", "echo", map[string]any{"text": "x"}); err != nil || !strings.HasPrefix(resultText(res), "echo: x") {
		t.Errorf("echo on the other server = %q, %v", resultText(res), err)
	}
}

// TestUpstreamCallErrors: each way a call fails has its class and says
// which server.
func TestUpstreamCallErrors(t *testing.T) {
	t.Parallel()
	// The timeout is short for one server only (quick): the other's
	// answers must not be taken for timeouts on a loaded machine.
	quick := testUpstream(t, "quick", "")
	quick.Timeout = 300 * time.Millisecond
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{quick, testUpstream(t, "test", "")}})
	g.WaitReady(context.Background())
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		class      error  // nil: none of the classes
		want       string // in the error
	}{
		{"timeout", "slow", map[string]any{"ms": 5000}, ErrTimeout, `server "quick" did not answer within 300ms (its timeout)`},
		{"json-rpc error", "fail", nil, nil, "fail fails"},
		{"unknown tool", "nosuch", nil, nil, `server "test"`},
		{"catalog tool", "", nil, ErrNotExecutable, "no upstream server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.tool == "" {
				_, err = call(g, "catalog", "create_issue", nil)
			} else {
				domain := "test"
				if tc.class == ErrTimeout {
					domain = "quick"
				}
				var res *mcp.CallToolResult
				res, err = call(g, domain, tc.tool, tc.args)
				if err == nil && res.IsError {
					err = errors.New(resultText(res))
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("call %s = %v, want an error saying %q", tc.tool, err, tc.want)
			}
			for _, class := range []error{ErrUnavailable, ErrTimeout, ErrStopped, ErrClosing, ErrNotExecutable} {
				if got := errors.Is(err, class); got != (class == tc.class) {
					t.Errorf("errors.Is(%v, %v) = %v", err, class, got)
				}
			}
			if tc.name == "json-rpc error" {
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) || werr.Code != -32042 {
					t.Errorf("the server's JSON-RPC error is not found in %v", err)
				}
			}
		})
	}
}

// TestCloseWhileListing: a Close that comes while the first listing of
// a server is being read (the tools arrived, the session not yet stored
// where Close finds it) still ends that session, and Close returns. The
// listing is held at its pinning step, Close runs and takes its look,
// then the listing goes on: before the fix the session stayed open and
// Close waited for it forever (a server test's cleanup hung 11 minutes
// in a loaded make test).
//
// Not parallel: waitStack reads every goroutine's stack, and another
// test's listing or Close must not stand for this one's.
func TestCloseWhileListing(t *testing.T) {
	g := New(Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	u := g.fleet.ups[0]
	u.pins.order.Lock()
	held := true
	defer func() {
		if held {
			u.pins.order.Unlock()
		}
	}()
	g.Start(context.Background())
	waitStack(t, "the listing to wait at its pinning", "gateway.(*upstream).list(")
	closed := make(chan struct{})
	go func() {
		g.Close()
		close(closed)
	}()
	waitStack(t, "Close to wait for the upstream's run", "gateway.(*Gateway).Close(")
	held = false
	u.pins.order.Unlock()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return 20 s after the listing it came during went on")
	}
}

// waitStack waits (up to 20 s) until a goroutine's stack holds frame,
// then 50 ms more for it to park; it fails t, naming what, otherwise.
func waitStack(t *testing.T, what, frame string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := runtime.Stack(buf, true)
		if strings.Contains(string(buf[:n]), frame) {
			time.Sleep(50 * time.Millisecond)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCloseCancelsCalls: Close cancels a call in flight, which fails as
// ErrClosing (the server's end may come first: ErrStopped), stops the
// server, and a call after Close fails as ErrClosing.
func TestCloseCancelsCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := New(Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", dir)}})
	g.Start(context.Background())
	g.WaitReady(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := call(g, "test", "slow", map[string]any{"ms": 60000})
		done <- err
	}()
	// The call is running when the server says so.
	for {
		if _, err := os.Stat(filepath.Join(dir, "slow")); err == nil || len(done) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.Close()
	err := recv(t, done, "the call cancelled by Close")
	if !errors.Is(err, ErrClosing) && !errors.Is(err, ErrStopped) {
		t.Errorf("the call in flight at Close = %v, want ErrClosing (or ErrStopped, when the server's exit came first)", err)
	}
	if _, err := call(g, "test", "echo", nil); !errors.Is(err, ErrClosing) {
		t.Errorf("a call after Close = %v, want ErrClosing", err)
	}
}

// TestListChanged: a tool the server adds while running is listed
// after its tools/list_changed, and Changed says so.
func TestListChanged(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var kept [][]index.ListedTools
	keptCh := make(chan struct{}, 16)
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}, Keep: func(l []index.ListedTools) error {
		mu.Lock()
		kept = append(kept, l)
		mu.Unlock()
		keptCh <- struct{}{}
		return nil
	}})
	g.WaitReady(context.Background())
	recv(t, keptCh, "the first Keep") // the first listing
	if _, err := call(g, "test", "add_tool", map[string]any{"name": "fresh"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, g, "the added tool", func() bool { return slices.Contains(toolNames(g, "test"), "fresh") })
	res, err := call(g, "test", "fresh", nil)
	if err != nil || resultText(res) != "added fresh" {
		t.Errorf("the added tool = %q, %v", resultText(res), err)
	}
	recv(t, keptCh, "the Keep of the new listing")
	mu.Lock()
	last := kept[len(kept)-1]
	mu.Unlock()
	if len(last) != 1 || last[0].Domain != "test" || last[0].Title != "Test Upstream" || !slices.ContainsFunc(last[0].Tools, func(ts index.ToolSpec) bool { return ts.Name == "fresh" }) {
		t.Errorf("Keep was given %+v, want the test server's tools with the added one", last)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestListChangedBurst: tools added one after another, faster than the
// gateway re-lists, all end up listed: a change announced during a
// re-listing is followed by one more.
func TestListChangedBurst(t *testing.T) {
	t.Parallel()
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}})
	g.WaitReady(context.Background())
	var added []string
	for i := range 5 {
		name := "burst" + string(rune('a'+i))
		if _, err := call(g, "test", "add_tool", map[string]any{"name": name}); err != nil {
			t.Fatal(err)
		}
		added = append(added, name)
	}
	waitUntil(t, g, "every added tool", func() bool {
		names := toolNames(g, "test")
		return !slices.ContainsFunc(added, func(n string) bool { return !slices.Contains(names, n) })
	})
}

// TestUnavailableQuotesTheError: the reason a down server gives is
// quoted on one line and bounded.
func TestUnavailableQuotesTheError(t *testing.T) {
	t.Parallel()
	g := New(Options{Upstreams: []UpstreamConfig{{Domain: "d", Command: "x"}}})
	u := g.fleet.byDom["d"]
	u.setDown(errors.New(strings.Repeat("long line\n", 100)))
	why := g.Directory().Unavailable()["d"]
	if strings.Contains(why, "\n") || len(why) > 260 {
		t.Errorf("Unavailable()[d] = %q (%d bytes), want one bounded line", why, len(why))
	}
	if st := stateOf(g, "d"); st.State != "down" || st.Err == nil {
		t.Errorf("Status = %+v, want down with the error", st)
	}
}
