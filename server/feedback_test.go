package server

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/toolscout/toolscout/embed"
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
