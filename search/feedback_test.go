package search

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
)

var fbNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fbEvents(query, tool string, callers, each int, at time.Time) []store.FeedbackEvent {
	var out []store.FeedbackEvent
	for c := range callers {
		for range each {
			out = append(out, store.FeedbackEvent{Request: query, Tool: tool, Caller: fmt.Sprintf("caller-%d", c), Time: at})
		}
	}
	return out
}

func scoreOf(rs []Result, name string) (float64, int) {
	for i, r := range rs {
		if r.Tool.QualifiedName == name {
			return r.Score, i + 1
		}
	}
	return math.Inf(-1), 0
}

// TestFeedbackOneCallerCapped: however many times one caller runs a tool
// after a request, the tool rises for everybody by at most
// Weight/ToolCap (at most the span of the scaled scores: a tool no list
// found does not pass the ranking's first), and no more than after one
// run; distinct callers raise it further, up to Weight; old runs fade.
func TestFeedbackOneCallerCapped(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	ctx := context.Background()
	const q, pushed, top = "open a new issue in a repository", "weather__get_forecast", "github__create_issue"
	search := func(events []store.FeedbackEvent) (*Response, FeedbackParams) {
		fb := NewFeedback(events, FeedbackOptions{Now: func() time.Time { return fbNow }})
		resp, err := fb.Search(ctx, eng, Request{Query: q, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		return resp, fb.Params()
	}
	plain, p := search(nil)
	if p.Weight/p.ToolCap > 1 {
		t.Fatalf("defaults let one caller add %.2f, more than the span of the scaled scores", p.Weight/p.ToolCap)
	}
	if got := names(plain.Results); got[0] != top {
		t.Fatalf("Search(%q) without feedback = %v, want %s first", q, got, top)
	}
	one, _ := search(fbEvents(q, pushed, 1, 1, fbNow))
	many, _ := search(fbEvents(q, pushed, 1, 1000, fbNow))
	s1, _ := scoreOf(one.Results, pushed)
	sMany, rank := scoreOf(many.Results, pushed)
	if math.Abs(s1-sMany) > 1e-9 {
		t.Errorf("one caller's 1000 runs scored %s %.4f, one run %.4f: want the same (one caller counts once)", pushed, sMany, s1)
	}
	// Scaled from 0 to 1, a tool scores at most 1 - its base, plus the
	// boost: here it is not in the plain list, so its base is 0.
	if sMany > p.Weight/p.ToolCap+1e-9 {
		t.Errorf("one caller raised %s to %.4f, want at most Weight/ToolCap = %.4f", pushed, sMany, p.Weight/p.ToolCap)
	}
	if got := names(many.Results); got[0] != top || rank == 0 {
		t.Errorf("after one caller's 1000 runs: %v (%s at %d); want %s still first, %s listed", got, pushed, rank, top, pushed)
	}
	callers := int(math.Ceil(p.ToolCap))
	crowd, _ := search(fbEvents(q, pushed, callers, 1, fbNow))
	if sCrowd, _ := scoreOf(crowd.Results, pushed); math.Abs(sCrowd-p.Weight) > 1e-9 {
		t.Errorf("after %d distinct callers ran %s it scored %.4f, want Weight %.4f", callers, pushed, sCrowd, p.Weight)
	}
	// Old runs fade: two half-lives ago they count a quarter.
	old, _ := search(fbEvents(q, pushed, callers, 1, fbNow.Add(-2*p.HalfLife)))
	sOld, _ := scoreOf(old.Results, pushed)
	if want := p.Weight * min(1, float64(callers)/p.ToolCap) / 4; math.Abs(sOld-want) > 1e-6 {
		t.Errorf("runs two half-lives old scored %s %.4f, want %.4f", pushed, sOld, want)
	}
}

// TestFeedbackSessionsAreOneCaller: events that name MCP sessions
// ("session:ID", as servers recorded them before issue 52, item 3) count
// as one caller's, however many sessions: a tool rises by Weight/ToolCap
// at most, as after one caller; users stay distinct callers.
func TestFeedbackSessionsAreOneCaller(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	const q, pushed = "open a new issue in a repository", "weather__get_forecast"
	score := func(callers ...string) float64 {
		var evs []store.FeedbackEvent
		for _, c := range callers {
			evs = append(evs, store.FeedbackEvent{Request: q, Tool: pushed, Caller: c, Time: fbNow})
		}
		fb := NewFeedback(evs, FeedbackOptions{Now: func() time.Time { return fbNow }})
		resp, err := fb.Search(context.Background(), eng, Request{Query: q, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := scoreOf(resp.Results, pushed)
		return s
	}
	p := DefaultFeedbackParams
	for _, tc := range []struct {
		name    string
		callers []string
		want    float64
	}{
		{"one session", []string{"session:a"}, p.Weight / p.ToolCap},
		{"ten sessions", []string{"session:a", "session:b", "session:c", "session:d", "session:e", "session:f", "session:g", "session:h", "session:i", "session:j"}, p.Weight / p.ToolCap},
		{"sessions and stateless", []string{"session:a", "session:b", store.AnonymousCaller}, p.Weight / p.ToolCap},
		{"two users", []string{"user:a", "user:b"}, p.Weight},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := score(tc.callers...); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("Search(%q) after runs by %v scored %s %.4f, want %.4f", q, tc.callers, pushed, got, tc.want)
			}
		})
	}
}

// TestFeedbackScope: the channel brings in no tool outside the request's
// domain, and none it excludes.
func TestFeedbackScope(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	const q = "open a new issue in a repository"
	fb := NewFeedback(append(fbEvents(q, "weather__get_forecast", 5, 1, fbNow), fbEvents(q, "github__list_issues", 5, 1, fbNow)...),
		FeedbackOptions{Now: func() time.Time { return fbNow }})
	for _, tc := range []struct {
		name string
		req  Request
		out  string
	}{
		{"domain", Request{Query: q, Domain: "github"}, "weather__get_forecast"},
		{"exclude", Request{Query: q, Exclude: []string{"github__list_issues"}}, "github__list_issues"},
		{"keyword mode, domain", Request{Query: q, Mode: Keyword, Domain: "github"}, "weather__get_forecast"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := fb.Search(context.Background(), eng, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if _, rank := scoreOf(resp.Results, tc.out); rank != 0 {
				t.Errorf("Search(%+v) = %v, want no %s", tc.req, names(resp.Results), tc.out)
			}
		})
	}
}

// TestFeedbackAddWhileSearching: events added while searches run (as the
// server adds them) are held within the cap, the oldest dropped, and
// the newest rank at once; run with -race.
func TestFeedbackAddWhileSearching(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	ctx := context.Background()
	fb := NewFeedback(nil, FeedbackOptions{Cap: 20, Now: func() time.Time { return fbNow }})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			fb.Add(store.FeedbackEvent{Request: fmt.Sprintf("check the sky over town %d", i%7), Tool: "slack__post_message", Caller: fmt.Sprintf("c%d", i), Time: fbNow})
		}
	}()
	for range 50 {
		if _, err := fb.Search(ctx, eng, Request{Query: "check the sky over town 3"}); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if n := fb.Len(); n > 20 || n < 18 {
		t.Errorf("Len() = %d after 200 adds with cap 20, want 18 to 20", n)
	}
	fb.Add(store.FeedbackEvent{Request: "what is the mood of the channel", Tool: "pagerduty__list_oncalls", Caller: "x", Time: fbNow})
	resp, err := fb.Search(ctx, eng, Request{Query: "what is the mood of the channel", Mode: Keyword})
	if err != nil {
		t.Fatal(err)
	}
	if s, rank := scoreOf(resp.Results, "pagerduty__list_oncalls"); rank == 0 || s < fb.Params().Weight/fb.Params().ToolCap-1e-9 {
		t.Errorf("the newest event's tool: rank %d, score %.3f; want it listed with one caller's whole boost", rank, s)
	}
}

// TestFeedbackSiblingsKeepTheirRequests: on a cloud catalog whose
// services each have list, get, create, update and delete tools
// (eval/datasets/near-alike), callers who ran get_cluster after asking
// for a cluster's settings do not take the requests of its siblings,
// alike as they are in words (the service, the cluster's name): each
// ranks its own tool where the plain ranking did, or higher. A recorded
// request asked again still gets get_cluster first.
//
// update_cluster's requests ("change its node count to 6 on the k8s
// cluster dev-cluster"), which the ranking tells from get_cluster's by
// less than it told the recorded "settings" request and whose vectors
// share the cluster's hashed name: TestFeedbackRunsOfOneKeepOffSiblings.
func TestFeedbackSiblingsKeepTheirRequests(t *testing.T) {
	eng := newCatalogEngine(t, filepath.Join("..", "eval", "datasets", "near-alike", "catalog.json"))
	ctx := context.Background()
	const ran = "nimbus__get_cluster"
	recorded := []string{
		"I need the settings of the k8s cluster called dev-cluster",
		"what is the current configuration of cluster dev-cluster?",
		"look up k8s cluster prod-gke and tell me its status",
	}
	var events []store.FeedbackEvent
	for _, q := range recorded {
		events = append(events, fbEvents(q, ran, 2, 1, fbNow)...)
	}
	fb := NewFeedback(events, FeedbackOptions{Now: func() time.Time { return fbNow }})
	rankOf := func(resp *Response, name string) int {
		_, r := scoreOf(resp.Results, name)
		if r == 0 {
			return 1 << 30
		}
		return r
	}
	for _, tc := range []struct{ query, want string }{
		{"delete k8s cluster dev-cluster permanently", "nimbus__delete_cluster"},
		{"tear down the k8s cluster prod-gke", "nimbus__delete_cluster"},
		{"get rid of the old cluster dev-cluster", "nimbus__delete_cluster"},
		{"show me all the k8s clusters in project prod", "nimbus__list_clusters"},
		{"provision another k8s cluster, dev-cluster, in eu-west-1", "nimbus__create_cluster"},
		{"set up a k8s cluster called prod-gke for project acme-web", "nimbus__create_cluster"},
	} {
		t.Run(tc.want+" "+tc.query, func(t *testing.T) {
			req := Request{Query: tc.query, Limit: 10}
			plain, err := eng.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fb.Search(ctx, eng, req)
			if err != nil {
				t.Fatal(err)
			}
			if p, f := rankOf(plain, tc.want), rankOf(got, tc.want); f > p {
				t.Errorf("Search(%q) after runs of %s = %v: %s at %d, at %d without them", tc.query, ran, names(got.Results)[:5], tc.want, f, p)
			}
		})
	}
	// A recorded request asked again: the runs count.
	again := recorded[0]
	plain, err := eng.Search(ctx, Request{Query: again, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got, err := fb.Search(ctx, eng, Request{Query: again, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if names(plain.Results)[0] == ran {
		t.Fatalf("Search(%q) = %v without feedback: want another tool first, for the runs to show", again, names(plain.Results)[:3])
	}
	if names(got.Results)[0] != ran {
		t.Errorf("Search(%q) after runs of %s after it = %v, want it first", again, ran, names(got.Results)[:3])
	}
}

// newCatalogEngine is an engine with the built-in embedder over a
// catalog file, indexed on disk in a temporary data dir.
func newCatalogEngine(t *testing.T, path string) *Engine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := index.ParseCatalog(path, data)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live, _, err := Open(context.Background(), LiveOptions{Store: st, Embedder: embed.NewBuiltin(embed.BuiltinOptions{})}, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	return live.Engine()
}
