package server

import (
	"sync"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
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
