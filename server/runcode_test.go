package server

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index/pin"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/server/codemode"
	"github.com/toolscout/toolscout/server/gateway"
)

// codeRunner is a sandbox runner for one test, closed with it.
func codeRunner(t *testing.T) *codemode.Runner {
	t.Helper()
	r := codemode.New(codemode.Options{Idle: 1})
	t.Cleanup(func() { r.Close() })
	return r
}

// codeAnswer runs code with run_code and decodes its answer.
func codeAnswer(t *testing.T, cs *mcp.ClientSession, code string) codemode.Answer {
	t.Helper()
	res := call(t, cs, RunCode, map[string]any{"code": code})
	var ans codemode.Answer
	if err := json.Unmarshal([]byte(text(res)), &ans); err != nil {
		t.Fatalf("run_code answer is not an Answer: %v: %s", err, text(res))
	}
	if res.IsError != (ans.Error != nil) {
		t.Errorf("run_code isError = %v with error %+v", res.IsError, ans.Error)
	}
	if structured(t, res) != normalize(t, text(res)) {
		t.Errorf("structuredContent %s differs from the text %s", structured(t, res), text(res))
	}
	return ans
}

func callNames(ans codemode.Answer) []string {
	var names []string
	for _, c := range ans.Calls {
		names = append(names, c.Tool)
	}
	return names
}

// TestRunCode: code mode lists run_code instead of execute_tool, and a
// program searches, chains calls, and gets clear errors for a wrong
// argument, an unknown tool and a tool that fails; the audit trail has
// a line per call and one for the program.
func TestRunCode(t *testing.T) {
	t.Parallel()
	w := &auditWriter{}
	srv := New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{}, Expose: Exposure{Mode: ExposeCode},
		Code: &Code{Runner: codeRunner(t)}, Audit: w})
	cs := connect(t, srv)
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := toolNames(lt)
	slices.Sort(listed)
	if strings.Join(listed, ",") != "discover_tools,get_tool_schema,run_code" {
		t.Fatalf("code mode lists %v, want discover_tools, get_tool_schema and run_code", listed)
	}

	tests := []struct {
		name       string
		code       string
		wantResult string
		wantCalls  []string
		wantKind   string
		wantMsg    []string
	}{
		{name: "search then call", code: `const found = await toolscout.search("open a new issue in a repository", {limit: 3});
const name = found.results[0].name;
const made = await tools.github.create_issue({repo: "a/b", title: "Crash"});
({name, title: made.title})`,
			wantResult: `{"name":"github__create_issue","title":"Crash"}`, wantCalls: []string{"toolscout.search", "github__create_issue"}},
		{name: "chained calls", code: `const a = await tools.github.list_issues({state: "open"});
const b = await tools.github.create_issue({repo: a.state, title: "from " + a.state});
b.title`, wantResult: `"from open"`, wantCalls: []string{"github__list_issues", "github__create_issue"}},
		{name: "wrong argument", code: `await tools.github.create_issue({repo: "a/b", title: 42})`,
			wantKind: codemode.KindTool, wantMsg: []string{"github__create_issue", "title", "string"}, wantCalls: []string{"github__create_issue"}},
		{name: "unknown tool", code: `await tools.github.create_isue({repo: "a/b"})`,
			wantKind: codemode.KindTool, wantMsg: []string{"unknown tool", "did you mean", "github__create_issue"}, wantCalls: []string{"github__create_isue"}},
		{name: "failing upstream caught", code: `try { await tools.weather.get_forecast({city: "Oslo"}); } catch (e) { return e.name + ": " + e.message; }`,
			wantResult: `"ToolError: weather__get_forecast failed: upstream weather is unavailable; other domains still work"`, wantCalls: []string{"weather__get_forecast"}},
		{name: "catalog-only tool", code: `await tools.jira.create_issue({summary: "x"})`,
			wantKind: codemode.KindTool, wantMsg: []string{"jira__create_issue", "cannot run here"}, wantCalls: []string{"jira__create_issue"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ans := codeAnswer(t, cs, tt.code)
			if tt.wantKind == "" {
				if ans.Error != nil || string(ans.Result) != tt.wantResult {
					t.Errorf("run_code(%q) = %s, %+v; want %s", tt.code, ans.Result, ans.Error, tt.wantResult)
				}
			} else {
				if ans.Error == nil || ans.Error.Kind != tt.wantKind {
					t.Fatalf("run_code(%q) error = %+v, want kind %s", tt.code, ans.Error, tt.wantKind)
				}
				for _, m := range tt.wantMsg {
					if !strings.Contains(ans.Error.Message, m) {
						t.Errorf("run_code(%q) error %q lacks %q", tt.code, ans.Error.Message, m)
					}
				}
			}
			if got := callNames(ans); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("run_code(%q) calls = %v, want %v", tt.code, got, tt.wantCalls)
			}
		})
	}

	// One line per tool call (a search is not a tool run) and one per
	// program, with its hash and not its text.
	lines := w.lines(t)
	var programs, runs int
	for _, l := range lines {
		if l["via"] != RunCode {
			t.Errorf("audit line via %v, want run_code: %v", l["via"], l)
		}
		if l["tool"] == AuditProgram {
			programs++
			if sum, _ := l["program_sha256"].(string); len(sum) != 64 {
				t.Errorf("program line without its hash: %v", l)
			}
			if _, ok := l["arguments"]; ok {
				t.Errorf("program text recorded without AuditArguments: %v", l)
			}
		} else {
			runs++
		}
	}
	if programs != len(tests) || runs != 7 {
		t.Errorf("audit has %d program lines and %d call lines, want %d and 7: %v", programs, runs, len(tests), lines)
	}
}

// TestRunCodeCallers: a caller's program cannot call, list or detect
// the tools hidden from it: over HTTP, both protocol generations, its
// answers are byte for byte those of a server that has only the tools
// it may see; each call is in the audit trail with its caller.
func TestRunCodeCallers(t *testing.T) {
	t.Parallel()
	program := `const out = {};
for (const [d, n] of [["jira", "create_issue"], ["github", "get_file_contents"], ["github", "create_issue"], ["nosuch", "tool"]]) {
  try { out[d + "." + n] = await tools[d][n]({repo: "a/b", title: "t", summary: "s"}); }
  catch (e) { out[d + "." + n] = e.name + ": " + e.message; }
}
out.search = (await toolscout.search("create a ticket", {limit: 10})).results.map(r => r.name);
out.types = [typeof tools.jira, typeof tools.jira.create_issue];
out`
	runner := codeRunner(t)
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol "+protocol, func(t *testing.T) {
			w := &auditWriter{}
			full := New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{}, Expose: Exposure{Mode: ExposeCode},
				Code: &Code{Runner: runner}, Callers: testCallers(t), Audit: w})
			hs := httptest.NewServer(full.HTTPHandler(HTTPOptions{}))
			t.Cleanup(hs.Close)
			visible := New(Options{Live: testLive(t, visibleCatalog, nil), Executor: &fakeExecutor{}, Expose: Exposure{Mode: ExposeCode},
				Code: &Code{Runner: runner}})
			vs := httptest.NewServer(visible.HTTPHandler(HTTPOptions{}))
			t.Cleanup(vs.Close)

			gh := connectURL(t, hs.URL, &http.Client{Transport: bearerRT(ghToken)}, protocol)
			want := connectURL(t, vs.URL, nil, protocol)
			got, exp := codeAnswer(t, gh, program), codeAnswer(t, want, program)
			if string(got.Result) != string(exp.Result) || !slices.Equal(callNames(got), callNames(exp)) {
				t.Errorf("caller gh's program =\n%s %v\nwant (a server of only gh's tools)\n%s %v", got.Result, callNames(got), exp.Result, callNames(exp))
			}
			for _, l := range w.lines(t) {
				if l["caller"] != "user:gh" {
					t.Errorf("audit line without gh as its caller: %v", l)
				}
			}
		})
	}
}

// TestRunCodeTimeout: timeout_ms shortens the program's time limit,
// and a program past it ends with the time limit named.
func TestRunCodeTimeout(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{}, Expose: Exposure{Mode: ExposeCode},
		Code: &Code{Runner: codeRunner(t), Limits: codemode.Limits{CPU: 30 * time.Second}}})
	cs := connect(t, srv)
	t0 := time.Now()
	res := call(t, cs, RunCode, map[string]any{"code": "while (true) {}", "timeout_ms": 300})
	if !res.IsError || !strings.Contains(text(res), `"limit":"time"`) {
		t.Errorf("a loop with timeout_ms 300 = %s, want the time limit", text(res))
	}
	if took := time.Since(t0); took > 10*time.Second {
		t.Errorf("a loop with timeout_ms 300 took %v", took)
	}
}

// TestRunCodeHeld: a program cannot run a tool whose definition changed
// upstream (a rug pull) until the change is approved: its call throws
// the same refusal execute_tool answers, and the audit trail records it
// as held.
func TestRunCodeHeld(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := &auditWriter{}
	env := startGatewayServer(t, gateway.Options{Upstreams: []gateway.UpstreamConfig{fakeConfig(t, "fake", "rugpull")},
		Pins: pin.NewGuard(store.OpenPins(dir, nil)), PinPoll: 50 * time.Millisecond},
		Options{Expose: Exposure{Mode: ExposeCode}, Code: &Code{Runner: codeRunner(t)}, Audit: w})
	waitFor(t, "tools", func() bool { return env.hasTool("fake__echo") })
	// fake__rug changes echo's description after it was pinned.
	if ans := codeAnswer(t, env.cs, `await tools.fake.rug({})`); ans.Error != nil {
		t.Fatalf("rug: %+v", ans.Error)
	}
	var ans codemode.Answer
	waitFor(t, "the changed tool to be held", func() bool {
		ans = codeAnswer(t, env.cs, `await tools.fake.echo({text: "hi"})`)
		return ans.Error != nil
	})
	if ans.Error.Kind != codemode.KindTool || !strings.Contains(ans.Error.Message, "fake__echo does not run") || !strings.Contains(ans.Error.Message, "toolscout approve fake__echo") {
		t.Errorf("a held tool from a program = %+v, want the refusal", ans.Error)
	}
	// A search gives no signature for the held tool: get_tool_schema
	// says why it does not run.
	var found SearchAnswer
	json.Unmarshal([]byte(structured(t, call(t, env.cs, DiscoverTools, map[string]any{"query": "echo text back", "search_mode": "keyword", "limit": 10}))), &found)
	signed := map[string]bool{}
	for _, r := range found.Results {
		signed[r.Name] = r.Signature != ""
	}
	if len(found.Results) < 2 || signed["fake__echo"] || !slices.Contains(slices.Collect(maps.Values(signed)), true) {
		t.Errorf("search results' signatures, by tool: %v; want none for the held fake__echo, some for the others", signed)
	}
	lines := w.lines(t)
	held := false
	for _, l := range lines {
		held = held || (l["tool"] == "fake__echo" && l["error"] == FailHeld)
	}
	if !held {
		t.Errorf("the audit trail has no held call of fake__echo: %v", lines)
	}
}

// TestRunCodeAnswerText: run_code's answer goes to the model once. A
// client that reads the content text gets the answer's JSON unescaped
// ("<" and "&" as they are, not "\u003c"); a client that reads
// structuredContent gets a line saying what it holds.
func TestRunCodeAnswerText(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, nil), Executor: &fakeExecutor{}, Expose: Exposure{Mode: ExposeCode},
		Code: &Code{Runner: codeRunner(t)}})
	const code = `console.log("x"); const a = await tools.github.list_issues({state: "open"}); "a<b && c>d " + a.state`
	res := call(t, connect(t, srv), RunCode, map[string]any{"code": code})
	if got := text(res); !strings.Contains(got, `"result":"a<b && c>d open"`) || normalize(t, got) != structured(t, res) {
		t.Errorf("run_code text = %s, want the structuredContent's JSON %s, unescaped", got, structured(t, res))
	}
	capable := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{Experimental: map[string]any{StructuredCapability: map[string]any{}}}}
	res = call(t, connectWith(t, srv, capable), RunCode, map[string]any{"code": code})
	const want = "The program made 1 call; its result is 17 bytes of JSON; 1 line of console (the answer is in structuredContent)"
	if got := text(res); got != want || !strings.Contains(structured(t, res), "open") {
		t.Errorf("run_code text for a client that reads structuredContent = %q, want %q (structured: %s)", got, want, structured(t, res))
	}
	res = call(t, connectWith(t, srv, capable), RunCode, map[string]any{"code": `await tools.github.nope({})`})
	if got := text(res); !res.IsError || !strings.HasPrefix(got, "The program made 1 call (1 failed); it failed (tool): unknown tool") {
		t.Errorf("a failed program's text for a client that reads structuredContent = %q", got)
	}
}
