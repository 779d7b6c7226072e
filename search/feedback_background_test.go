package search

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/logtest"
	"github.com/toolscout/toolscout/internal/synth"
)

// fbRankings writes what fb ranks for queries in mode, as the golden
// file does.
func fbRankings(t *testing.T, fb *Feedback, eng *Engine, mode Mode, queries []string) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, q := range queries {
		resp, err := fb.Search(context.Background(), eng, Request{Query: q, Mode: mode, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s\t%q\n", mode, q)
		for _, r := range resp.Results {
			fmt.Fprintf(&out, "\t%s\t%.9f\n", r.Tool.QualifiedName, r.Score)
		}
	}
	return out.Bytes()
}

// settle waits until f's background work is done.
func (f *Feedback) settle() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.bg != nil && f.bg.running {
		f.bg.idle.Wait()
	}
	if f.bg == nil {
		return nil
	}
	return f.bg.err
}

// TestFeedbackPreparedRanksAsMet: once the background has made what
// searches need (Prepare), the channel ranks exactly as the channel that
// made it in its searches ranked once those had met every recorded
// request (each recorded request searched once), in keyword and hybrid
// mode; and its searches make no ranking of their own.
func TestFeedbackPreparedRanksAsMet(t *testing.T) {
	eng := benchEngine(t, 200)
	events := feedbackBenchEvents(eng.Catalog(), 200, fbNow)
	var queries []string
	for _, q := range synth.LabelledQueries(eng.Catalog(), 20, 11) {
		queries = append(queries, q.Query)
	}
	queries = append(queries, synth.Queries(20, 12)...)
	ctx := context.Background()
	for _, mode := range []Mode{Keyword, Hybrid} {
		met := NewFeedback(events, FeedbackOptions{Now: func() time.Time { return fbNow }})
		seen := map[string]bool{}
		for _, ev := range events {
			if !seen[ev.Request] {
				seen[ev.Request] = true
				if _, err := met.Search(ctx, eng, Request{Query: ev.Request, Mode: mode}); err != nil {
					t.Fatal(err)
				}
			}
		}
		prepared := NewFeedback(events, FeedbackOptions{Now: func() time.Time { return fbNow }})
		if err := prepared.Prepare(ctx, eng, mode, nil); err != nil {
			t.Fatal(err)
		}
		inMode := func() int {
			prepared.mu.RLock()
			defer prepared.mu.RUnlock()
			n := 0
			for k := range prepared.ranks {
				if k.mode == mode {
					n++
				}
			}
			return n
		}
		made := inMode()
		want, got := fbRankings(t, met, eng, mode, queries), fbRankings(t, prepared, eng, mode, queries)
		if !bytes.Equal(got, want) {
			gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
			for i := range min(len(gl), len(wl)) {
				if !bytes.Equal(gl[i], wl[i]) {
					t.Fatalf("%s: prepared rankings differ from those of a channel that met every request at line %d:\n got %s\nwant %s", mode, i+1, gl[i], wl[i])
				}
			}
			t.Fatalf("%s: prepared rankings differ: %d lines, want %d", mode, len(gl), len(wl))
		}
		after := inMode()
		if after != made || made != len(seen) {
			t.Fatalf("%s: %d rankings prepared, %d after the searches, want %d (one per recorded request, none made by a search)", mode, made, after, len(seen))
		}
	}
}

// TestFeedbackAttachedSearchMakesNothing: attached, a search ranks and
// embeds none of the recorded requests (the background does; here it
// cannot, its context being done): they count nothing until they are
// made, and the search answers as the engine does.
func TestFeedbackAttachedSearchMakesNothing(t *testing.T) {
	eng := benchEngine(t, 200)
	events := feedbackBenchEvents(eng.Catalog(), 300, fbNow)
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	fb := NewFeedback(events, FeedbackOptions{Now: func() time.Time { return fbNow }})
	fb.Attach(stopped, eng, nil)
	fb.settle()
	for _, ev := range events[:20] {
		resp, err := fb.Search(context.Background(), eng, Request{Query: ev.Request, Mode: Hybrid, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := eng.Search(context.Background(), Request{Query: ev.Request, Mode: Hybrid, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if g, w := names(resp.Results), names(plain.Results); fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("Search(%q) with nothing made = %v, want the engine's %v", ev.Request, g, w)
		}
	}
	fb.settle()
	fb.mu.RLock()
	defer fb.mu.RUnlock()
	if len(fb.ranks) != 0 || fb.made != 0 {
		t.Fatalf("attached searches made %d rankings and %d vectors of recorded requests, want none", len(fb.ranks), fb.made)
	}
}

// TestFeedbackRecordedRunRankedInBackground: an event added to an
// attached channel has its request's vector and ranking made by the
// background, and then counts.
func TestFeedbackRecordedRunRankedInBackground(t *testing.T) {
	eng := benchEngine(t, 200)
	events := feedbackBenchEvents(eng.Catalog(), 200, fbNow)
	ctx := context.Background()
	fb := NewFeedback(events, FeedbackOptions{Now: func() time.Time { return fbNow }})
	if err := fb.Prepare(ctx, eng, Hybrid, nil); err != nil {
		t.Fatal(err)
	}
	tools := eng.Catalog().Tools()
	q := "the quarterly figures of the northern warehouse, please"
	pushed := tools[len(tools)-1].QualifiedName
	for c := range 3 {
		fb.Add(store.FeedbackEvent{Request: q, Tool: pushed, Caller: fmt.Sprintf("user:new-%d", c), Time: fbNow})
	}
	if err := fb.settle(); err != nil {
		t.Fatal(err)
	}
	fb.mu.RLock()
	rk := fb.ranks[rankOf{Hybrid, q}]
	vec := fb.vecs[fb.reqOf[q]].made
	fb.mu.RUnlock()
	if rk == nil || !vec {
		t.Fatalf("after Add: ranking %v, vector made %v; want both made in the background", rk != nil, vec)
	}
	resp, err := fb.Search(ctx, eng, Request{Query: q, Mode: Hybrid, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, at := scoreOf(resp.Results, pushed); at == 0 {
		t.Fatalf("Search(%q) = %v, want %s (run after it by 3 callers) listed", q, names(resp.Results), pushed)
	}
}

// TestFeedbackBackgroundFollowsChanges: when the parameters a search
// ranks with change (as a re-index changes the build), the rankings
// made before keep counting until the background has made them again
// under the new ones; a Reset (a forget, a fold) makes the agreements
// again. Searches and recordings run at once (run with -race).
func TestFeedbackBackgroundFollowsChanges(t *testing.T) {
	eng := benchEngine(t, 200)
	events := feedbackBenchEvents(eng.Catalog(), 300, fbNow)
	ctx := context.Background()
	fb := NewFeedback(events, FeedbackOptions{Now: func() time.Time { return fbNow }})
	if err := fb.Prepare(ctx, eng, Hybrid, nil); err != nil {
		t.Fatal(err)
	}
	old := fb.rankingKey(eng, nil)
	params := eng.Params()
	params.RRFK++
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				ev := events[(g*31+i*7)%len(events)]
				var p *Params
				if g%2 == 1 {
					p = &params
				}
				if _, err := fb.Search(ctx, eng, Request{Query: ev.Request, Mode: Hybrid, Limit: 10, Params: p}); err != nil {
					errs <- err
					return
				}
				if g == 0 {
					fb.Add(store.FeedbackEvent{Request: fmt.Sprintf("%s again %d", ev.Request, i), Tool: ev.Tool, Caller: "user:x", Time: fbNow})
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The last parameters searched with are those kept: rankings under
	// them for every request.
	if _, err := fb.Search(ctx, eng, Request{Query: "warm", Mode: Hybrid, Params: &params}); err != nil {
		t.Fatal(err)
	}
	if err := fb.settle(); err != nil {
		t.Fatal(err)
	}
	key := fb.rankingKey(eng, &params)
	if key == old {
		t.Fatal("other parameters give the same key")
	}
	check := func(when string) {
		t.Helper()
		fb.mu.RLock()
		defer fb.mu.RUnlock()
		for _, r := range fb.reqs {
			rk := fb.ranks[rankOf{Hybrid, r.text}]
			if rk == nil || rk.key != key || rk.gen != fb.gen {
				t.Fatalf("%s: request %q ranked %v, want a ranking under the parameters searched with last, of generation %d", when, r.text, rk != nil, fb.gen)
			}
		}
	}
	check("after concurrent searches and runs")
	fb.Reset(events[:150])
	if err := fb.settle(); err != nil {
		t.Fatal(err)
	}
	check("after Reset")
}

// TestFeedbackLoadLogged: attaching a channel whose log holds many
// requests (a serve's start) logs that they are ranked in the
// background, and when that is done, with how many.
func TestFeedbackLoadLogged(t *testing.T) {
	eng := benchEngine(t, 200)
	// fbLogLarge requests, all different: the smallest pass that is
	// logged (twice as many ranked twice the requests for nothing).
	events := feedbackBenchEvents(eng.Catalog(), fbLogLarge, fbNow)
	var buf logtest.Buffer
	fb := NewFeedback(events, FeedbackOptions{Now: func() time.Time { return fbNow }})
	fb.Attach(context.Background(), eng, slog.New(slog.NewTextHandler(&buf, nil)))
	if err := fb.settle(); err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	for _, want := range []string{"ranking the recorded requests in the background", "mode=hybrid", "recorded requests ranked; searches use all of them"} {
		if !strings.Contains(log, want) {
			t.Errorf("log after attaching %d events lacks %q:\n%s", len(events), want, log)
		}
	}
	fb.mu.RLock()
	defer fb.mu.RUnlock()
	if n := len(fb.ranks); n != len(fb.reqs) {
		t.Errorf("%d rankings after the load, want %d", n, len(fb.reqs))
	}
}

// TestSelectFirst: selectFirst picks the same first k as a sort, for
// sizes, k and values with many ties (the order breaks them by index).
func TestSelectFirst(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for range 300 {
		n := 1 + r.Intn(700)
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(r.Intn(1 + r.Intn(20)))
		}
		before := func(a, b int32) bool { return vals[a] > vals[b] || vals[a] == vals[b] && a < b }
		xs := make([]int32, n)
		for i := range xs {
			xs[i] = int32(i)
		}
		r.Shuffle(n, func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		sorted := slices.Clone(xs)
		slices.SortFunc(sorted, func(a, b int32) int {
			if before(a, b) {
				return -1
			}
			return 1
		})
		k := 1 + r.Intn(n)
		selectFirst(xs, k, before)
		got := slices.Clone(xs[:k])
		slices.Sort(got)
		want := slices.Clone(sorted[:k])
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d k=%d: first %v, want %v", n, k, got, want)
		}
	}
}
