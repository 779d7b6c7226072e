package search

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/internal/synth"
)

var updateFeedback = flag.Bool("update-feedback", false, "rewrite testdata/feedback_rankings.txt with what the feedback channel ranks now")

// TestFeedbackRankingUnchanged: the channel ranks a fixed set of 2,000
// events and 40 requests, in keyword and hybrid mode, as it did before
// its per-search cost stopped growing with the events (issue 52, item
// 11): the golden file was written by the channel before that change
// (go test -run TestFeedbackRankingUnchanged -update-feedback), and
// written again when runs began to count only as far as requests are
// alike in what tells tools apart (issue 46, item 5), and again when
// runs began to count by their requests' agreement and siblings by
// their words too (issue 46, item 5, second round). The requests were
// 80 until issue 47: the first 20 of each kind are kept, and the file
// lost the other 40's lines alone (each hybrid search through 2,000
// events ranks up to 16 recorded requests: most of the package's time
// under -race).
func TestFeedbackRankingUnchanged(t *testing.T) {
	racetest.Plain(t)
	eng := benchEngine(t, 300)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	events := feedbackBenchEvents(eng.Catalog(), 2000, now)
	var queries []string
	for _, q := range synth.LabelledQueries(eng.Catalog(), 40, 11)[:20] {
		queries = append(queries, q.Query)
	}
	queries = append(queries, synth.Queries(40, 12)[:20]...)
	var got bytes.Buffer
	for _, mode := range []Mode{Keyword, Hybrid} {
		fb := NewFeedback(events, FeedbackOptions{Now: func() time.Time { return now }})
		for range 2 { // every event's vector made, as a serve's first searches do
			if _, err := fb.Search(context.Background(), eng, Request{Query: "warm up", Mode: mode}); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range queries {
			resp, err := fb.Search(context.Background(), eng, Request{Query: q, Mode: mode, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&got, "%s\t%q\n", mode, q)
			for _, r := range resp.Results {
				// Scores to 9 places: the sums of word weights follow a
				// map's order, which moves their last bits.
				fmt.Fprintf(&got, "\t%s\t%.9f\n", r.Tool.QualifiedName, r.Score)
			}
		}
	}
	path := filepath.Join("testdata", "feedback_rankings.txt")
	if *updateFeedback {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range min(len(gl), len(wl)) {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("rankings differ from %s at line %d:\n got %s\nwant %s", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("rankings differ from %s: %d lines, want %d", path, len(gl), len(wl))
	}
}
