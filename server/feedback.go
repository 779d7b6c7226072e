package server

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
)

// Learning from what agents run: a discover_tools search is remembered
// per caller (callerOf: each session apart), and a tool the same caller
// then runs successfully (execute_tool, or a direct call of a listed
// tool) within FeedbackWindow is recorded with the search's request and
// the run's feedbackCaller (an identity, or one anonymous caller): kept
// by the FeedbackSink (the data dir, or JSON lines from a read-only
// replica) and added to the search.Feedback channel at once.

// FeedbackSink keeps the events the server records.
type FeedbackSink interface {
	RecordFeedback(ev store.FeedbackEvent) error
}

// FeedbackWindow is how long after a search a run is taken for its
// outcome.
const FeedbackWindow = 15 * time.Minute

// feedbackPerSearch is the most tools one search is credited with: an
// agent that runs many tools after one search does not make one request
// stand for all of them.
const feedbackPerSearch = 3

// Bounds of the searches held: each caller's newest searchesPerCaller
// (stateless clients without a token are one caller, whose searches
// interleave), and maxHeldSearches in all.
const (
	searchesPerCaller = 32
	maxHeldSearches   = 20000
)

// feedback is the server's side of the channel.
type feedback struct {
	model *search.Feedback
	sink  FeedbackSink
	log   *slog.Logger
	now   func() time.Time

	mu     sync.Mutex
	recent map[string][]*pastSearch // by caller (callerOf), oldest first
	held   int                      // the searches in recent
}

// pastSearch is one of a caller's recent searches.
type pastSearch struct {
	query  string
	at     time.Time
	listed []string // the qualified names its answer listed
	ran    map[string]bool
}

func newFeedback(model *search.Feedback, sink FeedbackSink, log *slog.Logger) *feedback {
	if model == nil {
		return nil
	}
	return &feedback{model: model, sink: sink, log: log, now: time.Now, recent: map[string][]*pastSearch{}}
}

// feedbackCaller is the caller a run of req is recorded for: the
// authenticated user, else store.AnonymousCaller. Only an identity is a
// distinct caller: one client opens as many sessions as it likes, and
// every request made with one shared --auth-token-file looks alike, so
// anonymous sessions count as one caller, as stateless requests and
// stdio always did (issue 52, item 3: two sessions took a tool from
// rank 35 to 1 for everybody).
func feedbackCaller(req *mcp.CallToolRequest) string {
	if req != nil && req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		return "user:" + req.Extra.TokenInfo.UserID
	}
	return store.AnonymousCaller
}

// callerOf identifies who sent req, as the audit trail names it and as
// searches are remembered: the authenticated user, else the MCP
// session, else "local" (stdio, or stateless requests without a token:
// indistinguishable). A session is no identity: the feedback channel
// credits runs to feedbackCaller.
func callerOf(req *mcp.CallToolRequest) string {
	if req == nil {
		return "local"
	}
	if req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		return "user:" + req.Extra.TokenInfo.UserID
	}
	if req.Session != nil {
		if id := req.Session.ID(); id != "" {
			return "session:" + id
		}
	}
	return "local"
}

// search answers a search request with eng, through the feedback
// channel when it is on (f not nil).
func (f *feedback) search(ctx context.Context, eng *search.Engine, req search.Request) (*search.Response, error) {
	if f == nil {
		return eng.Search(ctx, req)
	}
	return f.model.Search(ctx, eng, req)
}

// noteAnswer remembers a's search for feedback (off, f nil: nothing),
// with the tools its answer listed.
func (f *feedback) noteAnswer(req *mcp.CallToolRequest, a SearchAnswer) {
	if f == nil {
		return
	}
	listed := make([]string, len(a.Results))
	for i, e := range a.Results {
		listed[i] = e.Name
	}
	f.noteSearch(req, a.Query, listed)
}

// noteSearch remembers the caller's search of query, whose answer
// listed the tools of listed (qualified names).
func (f *feedback) noteSearch(req *mcp.CallToolRequest, query string, listed []string) {
	if f == nil || query == "" || len(listed) == 0 {
		return
	}
	caller, now := callerOf(req), f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held >= maxHeldSearches {
		// The expired go first, then whole callers until there is room.
		for c, past := range f.recent {
			live := slices.DeleteFunc(past, func(p *pastSearch) bool { return now.Sub(p.at) > FeedbackWindow })
			if f.held -= len(past) - len(live); len(live) == 0 || f.held >= maxHeldSearches {
				f.held -= len(live)
				delete(f.recent, c)
			} else {
				f.recent[c] = live
			}
		}
	}
	past := f.recent[caller]
	if len(past) >= searchesPerCaller {
		past = slices.Delete(past, 0, 1)
		f.held--
	}
	f.recent[caller] = append(past, &pastSearch{query: query, at: now, listed: listed, ran: map[string]bool{}})
	f.held++
}

// noteRun records t, run successfully by req's caller, with the
// caller's most recent search whose answer listed t, when it is recent
// (issue 52, item 9: with the caller's last search, whatever it listed,
// concurrent stateless clients were credited with each other's
// requests). A search is credited with each tool once, and with
// feedbackPerSearch tools at most.
func (f *feedback) noteRun(req *mcp.CallToolRequest, t *index.Tool) {
	if f == nil {
		return
	}
	caller, now := callerOf(req), f.now()
	f.mu.Lock()
	var ls *pastSearch
	past := f.recent[caller]
	for i := len(past) - 1; i >= 0 && now.Sub(past[i].at) <= FeedbackWindow; i-- {
		if slices.Contains(past[i].listed, t.QualifiedName) {
			ls = past[i]
			break
		}
	}
	if ls == nil || ls.ran[t.QualifiedName] || len(ls.ran) >= feedbackPerSearch {
		f.mu.Unlock()
		return
	}
	ls.ran[t.QualifiedName] = true
	ev := store.FeedbackEvent{Request: ls.query, Tool: t.QualifiedName, Caller: feedbackCaller(req), Time: now}
	f.mu.Unlock()
	ev, err := ev.Clean()
	if err != nil {
		return
	}
	f.model.Add(ev)
	if f.sink != nil {
		if err := f.sink.RecordFeedback(ev); err != nil {
			f.log.Warn("could not record what an agent ran", "tool", ev.Tool, "err", err)
		}
	}
}
