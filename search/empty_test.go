package search

import (
	"context"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index/store"
)

// TestSearchWithNoTool: an engine whose catalog has no tool yet (every
// upstream server down or still connecting) answers a query the same way
// in every mode: no results, no error, and a notice saying that no tool
// is indexed yet. Keyword and hybrid answered Bleve's "keyword search:
// field stat for bm25 not present name", semantic an empty list without
// a word (issue 34, defect 2).
func TestSearchWithNoTool(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live, _, err := Open(context.Background(), LiveOptions{Store: st, Embedder: embed.NewBuiltin(embed.BuiltinOptions{})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	eng := live.Engine()
	for _, tc := range []struct {
		mode  Mode
		query string
	}{
		{Keyword, "send a message to a channel"},
		{Semantic, "send a message to a channel"},
		{Hybrid, "send a message to a channel"},
		{"", "create_issue"},
		{Hybrid, "first read the file, then post it to the channel"},
	} {
		t.Run(string(tc.mode)+" "+tc.query, func(t *testing.T) {
			resp, err := eng.Search(context.Background(), Request{Query: tc.query, Mode: tc.mode, Explain: true})
			if err != nil {
				t.Fatalf("Search(%q, %s) = %v, want no error", tc.query, tc.mode, err)
			}
			want := tc.mode
			if want == "" {
				want = Hybrid
			}
			if resp.Results == nil || len(resp.Results) != 0 || resp.Notice != NoToolsNotice || resp.Mode != want || resp.Confidence != nil {
				t.Errorf("Search(%q, %s) = mode %s, notice %q, results %v, confidence %v; want mode %s, notice %q, an empty list, no confidence",
					tc.query, tc.mode, resp.Mode, resp.Notice, resp.Results, resp.Confidence, want, NoToolsNotice)
			}
		})
	}
}
