package server

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/httpguard"
)

// memSink keeps recorded events.
type memSink struct {
	mu  sync.Mutex
	evs []store.FeedbackEvent
}

func (m *memSink) RecordFeedback(ev store.FeedbackEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evs = append(m.evs, ev)
	return nil
}

func (m *memSink) events() []store.FeedbackEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]store.FeedbackEvent(nil), m.evs...)
}

// TestFeedbackRecorded: a tool run successfully after a search, by
// execute_tool or directly, is recorded once with the search's request;
// a failed run, a run without a search before it, and a run of the same
// tool again are not; each recorded event joins the channel at once.
func TestFeedbackRecorded(t *testing.T) {
	t.Parallel()
	sink := &memSink{}
	fb := search.NewFeedback(nil, search.FeedbackOptions{})
	srv := New(Options{Live: testLive(t, testCatalog, embed.NewBuiltin(embed.BuiltinOptions{})), Executor: &fakeExecutor{},
		Expose: Exposure{Mode: ExposeEager}, Feedback: fb, FeedbackSink: sink})
	cs := connect(t, srv)
	// A run before any search says nothing.
	call(t, cs, ExecuteTool, map[string]any{"tool_name": "github__list_issues"})
	if evs := sink.events(); len(evs) != 0 {
		t.Fatalf("a run without a search was recorded: %v", evs)
	}
	const q = "track a bug report"
	call(t, cs, DiscoverTools, map[string]any{"query": q})
	call(t, cs, ExecuteTool, map[string]any{"tool_name": "weather__get_forecast", "arguments": map[string]any{"city": "Oslo"}}) // fails upstream
	call(t, cs, ExecuteTool, map[string]any{"tool_name": "github__create_issue", "arguments": map[string]any{"repo": "a/b", "title": "x"}})
	call(t, cs, ExecuteTool, map[string]any{"tool_name": "github__create_issue", "arguments": map[string]any{"repo": "a/b", "title": "y"}})
	call(t, cs, "github__list_issues", map[string]any{}) // directly, as eager lists it
	evs := sink.events()
	if len(evs) != 2 || evs[0].Tool != "github__create_issue" || evs[1].Tool != "github__list_issues" || evs[0].Request != q || evs[0].Caller == "" {
		t.Fatalf("recorded %+v; want create_issue then list_issues after %q, each once, with a caller", evs, q)
	}
	if fb.Len() != 2 {
		t.Errorf("the channel holds %d events, want the 2 recorded", fb.Len())
	}
}

// TestFeedbackCallersAreIdentities: only an authenticated identity is a
// distinct caller of the feedback channel. Over real HTTP, anonymous
// 2025-11-25 sessions, stateless requests and sessions sharing one
// --auth-token-file all record their runs as one caller,
// store.AnonymousCaller; callers' tokens as their users (issue 52, item
// 3: each session was a caller of its own, so two sessions gave a tool
// the whole boost for everybody).
func TestFeedbackCallersAreIdentities(t *testing.T) {
	t.Parallel()
	const shared = "shared-token-0123456789abcdef"
	type client struct{ protocol, token string }
	for _, tc := range []struct {
		name    string
		callers bool   // the server has testCallers
		token   string // the server is behind httpguard with this token
		clients []client
		want    []string // the distinct callers of the events, sorted
	}{
		{"anonymous sessions", false, "", []client{{"2025-11-25", ""}, {"2025-11-25", ""}, {"2025-06-18", ""}}, []string{store.AnonymousCaller}},
		{"stateless and sessions", false, "", []client{{"", ""}, {"", ""}, {"2025-11-25", ""}}, []string{store.AnonymousCaller}},
		{"one shared token", false, shared, []client{{"2025-11-25", shared}, {"2025-11-25", shared}, {"", shared}}, []string{store.AnonymousCaller}},
		{"callers", true, "", []client{{"2025-11-25", ghToken}, {"2025-11-25", ghToken}, {"", "all-token-0123456789abcdef"}}, []string{"user:all", "user:gh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{}
			fb := search.NewFeedback(nil, search.FeedbackOptions{})
			o := Options{Live: testLive(t, testCatalog, embed.NewBuiltin(embed.BuiltinOptions{})), Executor: &fakeExecutor{}, Feedback: fb, FeedbackSink: sink}
			if tc.callers {
				o.Callers = testCallers(t)
			}
			h := New(o).HTTPHandler(HTTPOptions{})
			if tc.token != "" {
				h = httpguard.Wrap(h, httpguard.Options{Token: tc.token})
			}
			hs := httptest.NewServer(h)
			t.Cleanup(hs.Close)
			for _, c := range tc.clients {
				var hc *http.Client
				if c.token != "" {
					hc = &http.Client{Transport: bearerRT(c.token)}
				}
				cs := connectURL(t, hs.URL, hc, c.protocol)
				call(t, cs, DiscoverTools, map[string]any{"query": "track a bug report"})
				if res := call(t, cs, ExecuteTool, map[string]any{"tool_name": "github__create_issue", "arguments": map[string]any{"repo": "a/b", "title": "x"}}); res.IsError {
					t.Fatalf("execute_tool: %v", res.Content)
				}
			}
			evs := sink.events()
			seen := map[string]bool{}
			for _, ev := range evs {
				seen[ev.Caller] = true
			}
			if got := slices.Sorted(maps.Keys(seen)); len(evs) != len(tc.clients) || !slices.Equal(got, tc.want) {
				t.Errorf("%d clients recorded %d events of callers %v, want one each, of callers %v", len(tc.clients), len(evs), got, tc.want)
			}
		})
	}
}

// okExecutor runs every tool successfully, from any goroutine.
type okExecutor struct{}

func (okExecutor) Execute(_ context.Context, _ *mcp.CallToolRequest, t *index.Tool, _ map[string]any) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t.QualifiedName + " ran"}}}, nil
}

// TestFeedbackCreditsTheSearchThatListedTheTool: a run is credited to
// the caller's most recent search whose answer listed the tool, so that
// stateless clients, which are one caller, are not credited with each
// other's requests (issue 52, item 9: a run took the caller's last
// search, whoever sent it and whatever it listed). Over real HTTP, with
// go-sdk clients of the stateless protocol: two clients interleaved, then
// many at once (-race).
func TestFeedbackCreditsTheSearchThatListedTheTool(t *testing.T) {
	t.Parallel()
	// Each request's one result (limit 1) is a tool of its own.
	requests := []string{"open a new issue in a repository", "read a file from a repository", "list the issues of a repository"}
	setup := func(t *testing.T) (*memSink, string) {
		sink := &memSink{}
		srv := New(Options{Live: testLive(t, testCatalog, embed.NewBuiltin(embed.BuiltinOptions{})), Executor: okExecutor{},
			Feedback: search.NewFeedback(nil, search.FeedbackOptions{}), FeedbackSink: sink})
		hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
		t.Cleanup(hs.Close)
		return sink, hs.URL
	}
	discover := func(t *testing.T, cs *mcp.ClientSession, q string) string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: DiscoverTools, Arguments: map[string]any{"query": q, "domain": "github", "limit": 1}})
		if err != nil || res.IsError {
			t.Errorf("discover_tools %q: %v %v", q, err, res)
			return ""
		}
		var ans SearchAnswer
		b, _ := json.Marshal(res.StructuredContent)
		if json.Unmarshal(b, &ans); len(ans.Results) != 1 {
			t.Errorf("discover_tools %q answered %s, want one result", q, b)
			return ""
		}
		return ans.Results[0].Name
	}
	run := func(t *testing.T, cs *mcp.ClientSession, tool string) {
		args := map[string]any{"repo": "a/b", "title": "x"} // what create_issue needs
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ExecuteTool, Arguments: map[string]any{"tool_name": tool, "arguments": args}})
		if err != nil || res.IsError {
			t.Errorf("execute_tool %s: %v %v", tool, err, res)
		}
	}

	t.Run("interleaved", func(t *testing.T) {
		sink, url := setup(t)
		a, b := connectURL(t, url, nil, ""), connectURL(t, url, nil, "")
		toolA, toolB := discover(t, a, requests[0]), discover(t, b, requests[1])
		if toolA == toolB {
			t.Fatalf("%q and %q both answered %s: the test needs two tools", requests[0], requests[1], toolA)
		}
		run(t, a, toolA)
		run(t, b, toolB)
		run(t, a, "github__list_issues") // listed by neither search
		want := []store.FeedbackEvent{{Request: requests[0], Tool: toolA}, {Request: requests[1], Tool: toolB}}
		got := sink.events()
		for i := range got {
			got[i] = store.FeedbackEvent{Request: got[i].Request, Tool: got[i].Tool}
		}
		if !slices.Equal(got, want) {
			t.Errorf("recorded %v, want %v", got, want)
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		sink, url := setup(t)
		clients := make([]*mcp.ClientSession, 8)
		for i := range clients {
			clients[i] = connectURL(t, url, nil, "")
		}
		listedBy := map[string]string{} // tool → the request that lists it
		for _, q := range requests {
			listedBy[discover(t, clients[0], q)] = q
		}
		if len(listedBy) != len(requests) {
			t.Fatalf("requests %v list only %v: the test needs a tool each", requests, listedBy)
		}
		var wg sync.WaitGroup
		for i, cs := range clients {
			wg.Go(func() {
				for j := range 15 {
					q := requests[(i+j)%len(requests)]
					if tool := discover(t, cs, q); tool != "" {
						run(t, cs, tool)
					}
				}
			})
		}
		wg.Wait()
		evs := sink.events()
		if len(evs) == 0 {
			t.Fatal("nothing recorded")
		}
		for _, ev := range evs {
			if listedBy[ev.Tool] != ev.Request {
				t.Errorf("%s was credited to %q, which does not list it; want %q", ev.Tool, ev.Request, listedBy[ev.Tool])
			}
		}
	})
}
