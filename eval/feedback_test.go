package eval

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/search"
)

// TestFeedbackSplit: with a split, every run is scored on the same
// held-out queries, each beside its "+feedback" twin (bm25 has none),
// compared with it; the replayed queries are the seeded shuffle's first
// share, none of them scored; and a request replayed lifts its tool
// for the requests like it.
func TestFeedbackSplit(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(`{"domains":[{"name":"ops","description":"Operations","tools":[
	 {"name":"list_oncalls","description":"List who is on call.","inputSchema":{"type":"object"}},
	 {"name":"page_someone","description":"Page a person about an incident.","inputSchema":{"type":"object"}},
	 {"name":"create_incident","description":"Trigger an incident.","inputSchema":{"type":"object"}}]}]}`), 0o644)
	var qs strings.Builder
	for i := range 20 {
		// Requests that name neither tool's words: only what was run
		// after them tells which one they want.
		fmt.Fprintf(&qs, `{"id":"q%d","query":"handle it the usual way please, case %d","relevant":["ops/page_someone"]}`+"\n", i, i%2)
	}
	os.WriteFile(filepath.Join(dir, "queries.jsonl"), []byte(qs.String()), 0o644)
	ds, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	scored, replayed := splitForFeedback(ds, 0.5)
	if len(scored.Queries) != 10 || len(replayed) != 10 {
		t.Fatalf("split 0.5 of 20: %d scored, %d replayed", len(scored.Queries), len(replayed))
	}
	for _, r := range replayed {
		for _, s := range scored.Queries {
			if r.ID == s.ID {
				t.Errorf("query %s is both replayed and scored", r.ID)
			}
		}
	}
	rep, err := Evaluate(context.Background(), []*Dataset{ds}, Options{
		Runs: []RunSpec{{Mode: BM25}, {Mode: search.Keyword}, {Mode: search.Hybrid}}, Embedder: embed.NewBuiltin(embed.BuiltinOptions{}), FeedbackSplit: 0.5,
	})
	if err != nil {
		t.Fatal(err)
	}
	metrics := MetricNames([]int{1, 5, 10})
	Compare(rep, 0, metrics)
	CompareFeedback(rep, metrics)
	d := rep.Datasets[0]
	var got []string
	for _, r := range d.Runs {
		got = append(got, r.RunName())
	}
	if strings.Join(got, ",") != "bm25,keyword,hybrid,keyword+feedback,hybrid+feedback" || d.Queries != 10 {
		t.Fatalf("runs %v on %d queries; want bm25, keyword, hybrid and their +feedback twins on the 10 held out", got, d.Queries)
	}
	for _, name := range []string{"keyword", "hybrid"} {
		var plain, fb float64
		for _, r := range d.Runs {
			switch r.RunName() {
			case name:
				plain = r.Metrics["mrr"]
			case name + FeedbackSuffix:
				fb = r.Metrics["mrr"]
			}
		}
		if fb != 1 || fb <= plain {
			t.Errorf("%s: MRR %.3f, with feedback %.3f; want 1 with feedback, above the plain run", name, plain, fb)
		}
		found := false
		for _, c := range d.Comparisons {
			found = found || c.Run == name+FeedbackSuffix && c.Baseline == name && c.Metric == "ndcg@10"
		}
		if !found {
			t.Errorf("no comparison of %s+feedback with %s: %+v", name, name, d.Comparisons)
		}
	}
	var buf bytes.Buffer
	rep.WriteTable(&buf, metrics, true)
	if !strings.Contains(buf.String(), "hybrid+feedback") {
		t.Errorf("the markdown table does not name hybrid+feedback:\n%s", buf.String())
	}
}
