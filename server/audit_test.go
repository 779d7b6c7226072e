package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/gateway"
)

// auditWriter keeps each Write it gets. It takes no lock: were two lines
// written at once, the race detector would say so.
type auditWriter struct{ writes [][]byte }

func (w *auditWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, bytes.Clone(p))
	return len(p), nil
}

// lines checks that each Write was one whole line of at most
// AuditLineMax bytes, a JSON object, and returns them decoded.
func (w *auditWriter) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, p := range w.writes {
		if len(p) > AuditLineMax || !bytes.HasSuffix(p, []byte("\n")) || bytes.Count(p, []byte("\n")) != 1 {
			t.Fatalf("write %d is not one line of at most %d bytes: %d bytes, %d newlines: %.200q", i, AuditLineMax, len(p), bytes.Count(p, []byte("\n")), p)
		}
		var m map[string]any
		if err := json.Unmarshal(p, &m); err != nil {
			t.Fatalf("line %d is not a JSON object: %v: %.200q", i, err, p)
		}
		out = append(out, m)
	}
	return out
}

// auditKeys are the keys a line has without arguments (upstream and error
// only when they have a value).
var auditKeys = []string{"time", "caller", "via", "tool", "upstream", "outcome", "error", "duration_ms", "result_bytes"}

// wantLine is what a test expects of a line.
type wantLine struct {
	via, tool, upstream, outcome, fail string
}

// checkLines compares lines with want, in order, and checks the fields
// every line has: time within [from, to], the caller, a duration, no key
// but auditKeys.
func checkLines(t *testing.T, lines []map[string]any, want []wantLine, caller string, from, to time.Time) {
	t.Helper()
	if len(lines) != len(want) {
		t.Fatalf("%d audit lines, want %d (one per call): %v", len(lines), len(want), lines)
	}
	for i, w := range want {
		l := lines[i]
		for k := range l {
			if !slices.Contains(auditKeys, k) {
				t.Errorf("line %d has key %q (%v); want only %v without --audit-arguments", i, k, l[k], auditKeys)
			}
		}
		str := func(k string) string { s, _ := l[k].(string); return s }
		got := wantLine{via: str("via"), tool: str("tool"), upstream: str("upstream"), outcome: str("outcome"), fail: str("error")}
		if got != w {
			t.Errorf("line %d = %+v, want %+v", i, got, w)
		}
		if str("caller") != caller {
			t.Errorf("line %d caller = %q, want %q", i, str("caller"), caller)
		}
		at, err := time.Parse(time.RFC3339Nano, str("time"))
		if err != nil || at.Before(from) || at.After(to) || at.Location() != time.UTC {
			t.Errorf("line %d time = %q (%v), want a UTC time of the test", i, str("time"), err)
		}
		if d, ok := l["duration_ms"].(float64); !ok || d < 0 || d > float64(to.Sub(from).Milliseconds()+1) {
			t.Errorf("line %d duration_ms = %v", i, l["duration_ms"])
		}
		if _, ok := l["result_bytes"].(float64); !ok {
			t.Errorf("line %d result_bytes = %v", i, l["result_bytes"])
		}
	}
}

// resultBytes returns the size of res as JSON, less the members the SDK
// adds (_meta, resultType).
func resultBytes(t *testing.T, res *mcp.CallToolResult) float64 {
	t.Helper()
	b, err := json.Marshal(&mcp.CallToolResult{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError})
	if err != nil {
		t.Fatal(err)
	}
	return float64(len(b))
}

// TestAuditTrail: calls through the gateway to a real (fake) upstream,
// by execute_tool and directly, make one line each with the caller, the
// qualified name, the upstream, the outcome with the failure's class,
// the duration and the result's size, and no arguments by default.
// Meta-tool calls that run nothing (discover_tools) make none.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	w := &auditWriter{}
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok")}, MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond},
		Options{Expose: Exposure{Mode: ExposeEager}, Audit: w})
	waitFor(t, "the fake's tools", func() bool { return env.hasTool("fake__echo") })
	from := time.Now()
	echo := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__echo", "arguments": map[string]any{"text": "secret-value"}})
	if echo.IsError {
		t.Fatal(text(echo))
	}
	call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__fail"})
	call(t, env.cs, DiscoverTools, map[string]any{"query": "echo"})
	call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__nope"})
	call(t, env.cs, ExecuteTool, map[string]any{"tool_name": ""})
	call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__echo", "arguments": map[string]any{"txt": "secret-value"}})
	direct := call(t, env.cs, "fake__echo", map[string]any{"text": "secret-value"})
	call(t, env.cs, "fake__echo", map[string]any{"text": 5})
	call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__crash"})
	to := time.Now()

	lines := w.lines(t)
	checkLines(t, lines, []wantLine{
		{ExecuteTool, "fake__echo", "fake", AuditOK, ""},
		{ExecuteTool, "fake__fail", "fake", AuditToolError, ""},
		{ExecuteTool, "fake__nope", "", AuditFailure, FailUnknownTool},
		{ExecuteTool, "", "", AuditFailure, FailBadRequest},
		{ExecuteTool, "fake__echo", "fake", AuditFailure, FailInvalidArguments},
		{AuditDirect, "fake__echo", "fake", AuditOK, ""},
		{AuditDirect, "fake__echo", "fake", AuditFailure, FailInvalidArguments},
		{ExecuteTool, "fake__crash", "fake", AuditFailure, FailStopped},
	}, "local", from, to)
	if got, want := lines[0]["result_bytes"], resultBytes(t, echo); got != want {
		t.Errorf("execute_tool's result_bytes = %v, want %v (the result the client got)", got, want)
	}
	if got, want := lines[5]["result_bytes"], resultBytes(t, direct); got != want {
		t.Errorf("the direct call's result_bytes = %v, want %v", got, want)
	}
	for i, p := range w.writes {
		if bytes.Contains(p, []byte("secret-value")) {
			t.Errorf("line %d holds an argument without --audit-arguments: %s", i, p)
		}
	}
}

// TestAuditFailureClasses: toolscout's own refusals, without an
// upstream, each have their class.
func TestAuditFailureClasses(t *testing.T) {
	t.Parallel()
	w := &auditWriter{}
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{}, Audit: w}))
	from := time.Now()
	call(t, cs, ExecuteTool, map[string]any{"tool_name": "create_issue", "arguments": map[string]any{}})
	call(t, cs, ExecuteTool, map[string]any{"tool_name": "jira__create_issue", "arguments": map[string]any{}})
	call(t, cs, ExecuteTool, map[string]any{"tool_name": "weather__get_forecast", "arguments": map[string]any{"city": "Oslo"}})
	call(t, cs, ExecuteTool, map[string]any{"tool_name": strings.Repeat("n", 1000)})
	call(t, cs, ExecuteTool, map[string]any{"tool_name": strings.Repeat("\x01", 1000)}) // 6 bytes each in JSON
	checkLines(t, w.lines(t), []wantLine{
		{ExecuteTool, "create_issue", "", AuditFailure, FailUnknownTool},
		{ExecuteTool, "jira__create_issue", "jira", AuditFailure, FailNotExecutable},
		{ExecuteTool, "weather__get_forecast", "weather", AuditFailure, FailUpstream},
		{ExecuteTool, strings.Repeat("n", auditToolNameMax-len("…")) + "…", "", AuditFailure, FailUnknownTool},
		{ExecuteTool, strings.Repeat("\x01", (auditToolNameMax-len("…"))/6) + "…", "", AuditFailure, FailUnknownTool},
	}, "local", from, time.Now())
}

// TestAuditUpstreamUnavailable: a call of a known tool whose server is
// still starting past the call's timeout fails as upstream_unavailable.
func TestAuditUpstreamUnavailable(t *testing.T) {
	t.Parallel()
	known := fakeKnown(t, "slow")
	slow := fakeConfig(t, "slow", "ok")
	slow.Env["TOOLSCOUT_FAKE_DELAY"] = "3s"
	slow.Timeout = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	gw := gateway.New(gateway.Options{Upstreams: []gateway.UpstreamConfig{slow}, Known: []index.ListedTools{known}})
	live := emptyLiveKnowing(t, gw.Specs())
	if _, err := live.Load(ctx, nil, embed.NewBuiltin(embed.BuiltinOptions{}), nil); err != nil {
		t.Fatal(err)
	}
	live.Follow(ctx, gw, search.FollowOptions{})
	w := &auditWriter{}
	srv := New(Options{Live: live, Executor: gw, Audit: w})
	gw.Start(ctx)
	t.Cleanup(gw.Close)
	from := time.Now()
	call(t, connect(t, srv), ExecuteTool, map[string]any{"tool_name": "slow__echo", "arguments": map[string]any{"text": "hi"}})
	checkLines(t, w.lines(t), []wantLine{{ExecuteTool, "slow__echo", "slow", AuditFailure, FailUnavailable}}, "local", from, time.Now())
}

// TestAuditFailClass: the gateway's errors map to their classes.
func TestAuditFailClass(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"unavailable", fmt.Errorf("server %q: %w", "x", gateway.ErrUnavailable), FailUnavailable},
		{"timeout", fmt.Errorf("x: %w", gateway.ErrTimeout), FailTimeout},
		{"unauthorized", fmt.Errorf("x: %w", gateway.ErrUnauthorized), FailUnauthorized},
		{"stopped", fmt.Errorf("x: %w", gateway.ErrStopped), FailStopped},
		{"closing", fmt.Errorf("x: %w", gateway.ErrClosing), FailShuttingDown},
		{"not executable", gateway.ErrNotExecutable, FailNotExecutable},
		{"cancelled", context.Canceled, FailCanceled},
		{"protocol error", errors.New("server \"x\": method not found"), FailUpstream},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := failClass(c.err); got != c.want {
				t.Errorf("failClass(%v) = %q, want %q", c.err, got, c.want)
			}
		})
	}
}

// TestAuditArguments: with AuditArguments, a line holds the call's
// arguments as sent (HTML characters unescaped) and their size; large
// ones are shortened so that the line stays within AuditLineMax, the
// short arguments beside a long one kept whole.
func TestAuditArguments(t *testing.T) {
	t.Parallel()
	w := &auditWriter{}
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok")}, MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond},
		Options{Expose: Exposure{Mode: ExposeEager}, Audit: w, AuditArguments: true})
	waitFor(t, "the fake's tools", func() bool { return env.hasTool("fake__echo") })
	big := map[string]any{"text": strings.Repeat("x", 100_000), "path": "/srv/data/report.txt"}
	call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__echo", "arguments": map[string]any{"text": "a <b> & c"}})
	call(t, env.cs, "fake__echo", big)
	call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__fail"})
	if len(w.writes) != 3 {
		t.Fatalf("%d lines, want 3", len(w.writes))
	}
	if !bytes.Contains(w.writes[0], []byte(`"arguments":{"text":"a <b> & c"},"arguments_bytes":20}`)) || bytes.Contains(w.writes[0], []byte("arguments_cut")) {
		t.Errorf("small arguments: %s, want them whole and unescaped with their size", w.writes[0])
	}
	lines := w.lines(t)
	whole, _ := json.Marshal(big)
	args, _ := lines[1]["arguments"].(map[string]any)
	if lines[1]["arguments_cut"] != true || lines[1]["arguments_bytes"] != float64(len(whole)) ||
		args["path"] != "/srv/data/report.txt" || args["text"] != strings.Repeat("x", 253)+"…" {
		t.Errorf("large arguments: %.300s; want them cut (text to 256 bytes, path whole), arguments_bytes %d", w.writes[1], len(whole))
	}
	if !bytes.Contains(w.writes[2], []byte(`"arguments":{},"arguments_bytes":2}`)) {
		t.Errorf("no arguments: %s, want {}", w.writes[2])
	}
}

// TestAuditBoundArguments: arguments of every shape come out as valid
// JSON (and UTF-8) of at most the bound, with their whole size.
func TestAuditBoundArguments(t *testing.T) {
	t.Parallel()
	deep := map[string]any{"leaf": strings.Repeat("x", 3000)}
	for range 50 {
		deep = map[string]any{"d": deep}
	}
	many := map[string]any{}
	for i := range 1000 {
		many[fmt.Sprintf("k%04d", i)] = "v"
	}
	long := make([]any, 5000)
	for i := range long {
		long[i] = float64(i)
	}
	for _, c := range []struct {
		name  string
		args  map[string]any
		cut   bool
		check func(got map[string]any) bool
	}{
		{"fits", map[string]any{"a": 1.0, "b": "x", "c": []any{true, nil}}, false, func(got map[string]any) bool { return got["b"] == "x" }},
		{"long string beside a short one", map[string]any{"content": strings.Repeat("c", 10_000), "path": "/p"}, true,
			func(got map[string]any) bool { return got["path"] == "/p" && len(got["content"].(string)) == 256 }},
		{"escapes", map[string]any{"s": strings.Repeat("\x01", 5000), "t": "short"}, true, func(got map[string]any) bool { return got["t"] == "short" }},
		{"multibyte", map[string]any{"s": strings.Repeat("é", 5000)}, true, func(got map[string]any) bool { return strings.HasPrefix(got["s"].(string), "éé") }},
		{"many keys", many, true, func(got map[string]any) bool { return got["k0000"] == "v" && got["…"] == "984 more" }},
		{"deep", deep, true, func(got map[string]any) bool {
			d3, _ := got["d"].(map[string]any)["d"].(map[string]any)["d"].(map[string]any)
			return d3["d"] == "…"
		}},
		{"long array", map[string]any{"ids": long}, true, func(got map[string]any) bool {
			ids, _ := got["ids"].([]any)
			return len(ids) == 17 && ids[16] == "…4984 more"
		}},
		{"long keys", map[string]any{strings.Repeat("k", 3000): "v", strings.Repeat("k", 2999) + "j": "w"}, true, func(got map[string]any) bool { return len(got) >= 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			whole, _ := json.Marshal(c.args)
			raw, size, cut := boundArguments(c.args, AuditArgumentsMax)
			if len(raw) > AuditArgumentsMax || !json.Valid(raw) || !utf8.Valid(raw) {
				t.Fatalf("boundArguments = %d bytes, valid JSON %v, UTF-8 %v: %.200s", len(raw), json.Valid(raw), utf8.Valid(raw), raw)
			}
			if size != len(whole) || cut != c.cut {
				t.Errorf("boundArguments size, cut = %d, %v; want %d, %v", size, cut, len(whole), c.cut)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil || !c.check(got) {
				t.Errorf("boundArguments = %.300s (%v)", raw, err)
			}
		})
	}
}

// TestAuditConcurrentCalls: calls at once, by execute_tool and directly,
// each make one line, written whole (-race: never two Writes at once).
func TestAuditConcurrentCalls(t *testing.T) {
	t.Parallel()
	w := &auditWriter{}
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok")}, MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond},
		Options{Expose: Exposure{Mode: ExposeEager}, Audit: w, AuditArguments: true})
	waitFor(t, "the fake's tools", func() bool { return env.hasTool("fake__echo") })
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		word := fmt.Sprintf("call-%02d-%s", i, strings.Repeat("y", 1500))
		wg.Go(func() {
			call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "fake__echo", "arguments": map[string]any{"text": word}})
		})
		wg.Go(func() { call(t, env.cs, "fake__echo", map[string]any{"text": word}) })
	}
	wg.Wait()
	seen := map[string]int{}
	for _, l := range w.lines(t) {
		args, _ := l["arguments"].(map[string]any)
		word, _ := args["text"].(string)
		if l["outcome"] != AuditOK {
			t.Errorf("line %v, want ok", l)
		}
		seen[fmt.Sprint(l["via"], " ", word[:min(len(word), 7)])]++
	}
	if len(seen) != 2*n || slices.Max(slices.Collect(maps.Values(seen))) != 1 {
		t.Errorf("%d distinct calls in %d lines, want each of the %d once: %v", len(seen), len(w.writes), 2*n, seen)
	}
}

// TestAuditCallerOverHTTP: over HTTP, a client with a session is its
// session; a stateless client is "local" (it has no identity yet).
func TestAuditCallerOverHTTP(t *testing.T) {
	t.Parallel()
	w := &auditWriter{}
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "ok")}, MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond},
		Options{Expose: Exposure{Mode: ExposeMeta}, Audit: w})
	waitFor(t, "the fake's tools", func() bool { return env.hasTool("fake__echo") })
	hs := httptest.NewServer(env.srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	session := connectURL(t, hs.URL, nil, sessionOpts.ProtocolVersion)
	stateless := connectURL(t, hs.URL, nil, "")
	echo := map[string]any{"tool_name": "fake__echo", "arguments": map[string]any{"text": "hi"}}
	call(t, session, ExecuteTool, echo)
	call(t, stateless, ExecuteTool, echo)
	lines := w.lines(t)
	if len(lines) != 2 || session.ID() == "" || lines[0]["caller"] != "session:"+session.ID() || lines[1]["caller"] != "local" {
		t.Errorf("callers = %v, want session:%s then local", lines, session.ID())
	}
}

// failingWriter fails every Write until ok.
type failingWriter struct {
	ok bool
	auditWriter
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if !w.ok {
		return 0, errors.New("disk full")
	}
	return w.auditWriter.Write(p)
}

// TestAuditWriteFails: a trail that cannot be written fails no call, and
// the log says so once, then once when it works again.
func TestAuditWriteFails(t *testing.T) {
	t.Parallel()
	var logBuf bytes.Buffer
	w := &failingWriter{}
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{}, Audit: w,
		Logger: slog.New(slog.NewTextHandler(&logBuf, nil))}))
	echo := map[string]any{"tool_name": "github__list_issues"}
	for range 3 {
		if res := call(t, cs, ExecuteTool, echo); res.IsError {
			t.Fatalf("a call failed for the audit trail: %s", text(res))
		}
	}
	w.ok = true
	call(t, cs, ExecuteTool, echo)
	logs := logBuf.String()
	if strings.Count(logs, "could not write the trail") != 1 || strings.Count(logs, "writing the trail again") != 1 || len(w.writes) != 1 {
		t.Errorf("log = %s; %d lines written; want one warning, one recovery, and the last line", logs, len(w.writes))
	}
}

// fullDisk writes to a real file as a disk with room bytes left does: a
// Write past them lands in part and fails with ENOSPC, and the part
// stays (as on a pipe, or a file nothing takes back).
type fullDisk struct {
	f    *os.File
	room int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	n, err := d.f.Write(p[:min(len(p), d.room)])
	d.room -= n
	if err == nil && n < len(p) {
		err = syscall.ENOSPC
	}
	return n, err
}

// TestAuditTornLine: after a Write cut short by a full disk, the next
// line starts a line of its own once there is room again, instead of
// being glued to the fragment (issue 52, item 5: the trail held a line
// that was not JSON and one more record was lost to every JSON-lines
// reader). The fragment is a line of its own; every record written
// whole reads as JSON.
func TestAuditTornLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	disk := &fullDisk{f: f, room: 1 << 20}
	cs := connect(t, New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{}, Audit: disk}))
	run := func() { call(t, cs, ExecuteTool, map[string]any{"tool_name": "github__list_issues"}) }
	run()
	whole, _ := os.ReadFile(path)
	disk.room = len(whole) / 2 // the next line lands in half
	run()
	run() // no room at all
	disk.room = 1 << 20
	run()
	run()
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	var records, other int
	for _, l := range lines {
		if l == "" {
			continue
		}
		var m map[string]any
		if !strings.HasSuffix(l, "\n") || json.Unmarshal([]byte(l), &m) != nil {
			other++
			continue
		}
		records++
	}
	if records != 3 || other != 1 {
		t.Errorf("the trail holds %d records and %d other lines, want the 3 written whole and the one fragment on its own:\n%s", records, other, data)
	}
}
