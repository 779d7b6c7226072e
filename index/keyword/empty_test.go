package keyword

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolscout/toolscout/index"
)

// TestSearchWithNoTool: an index that holds no tool (every upstream
// server down or still connecting) answers every kind of query with no
// hits, not Bleve's "field stat for bm25 not present" (issue 34, defect
// 2): fresh, and opened again (read-write and read-only) from statistics
// an earlier toolscout stored for an empty catalog, which named no field
// but the group.
func TestSearchWithNoTool(t *testing.T) {
	every := DefaultFieldWeights()
	for f := range every {
		every[f] = 1
	}
	queries := []struct {
		name string
		q    Query
	}{
		{"plain", Query{Text: "send a message to a channel"}},
		{"domain and group", Query{Text: "send", Domain: "slack", Group: "chat"}},
		{"ids", Query{Text: "send", IDs: []string{"slack__post_message"}}},
		{"explain", Query{Text: "send", Explain: true}},
		{"divided", Query{Text: "send", Divide: true}},
		{"fuzzy", Query{Text: "sned mesage", Fuzzy: 0.5}},
		{"every field", Query{Text: "send", Weights: every, Scoring: Scoring{Coord: true, IDFWeight: true}}},
	}
	empty, err := index.NewCatalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kw")
	legacy, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := legacy.Sync(context.Background(), empty); err != nil {
		t.Fatal(err)
	}
	if err := legacy.idx.SetInternal([]byte(lengthsKey), sealLengths([]byte(`{"doc_count":0,"field_cardinality":{"group":0}}`))); err != nil {
		t.Fatal(err)
	}
	if err := legacy.Close(); err != nil {
		t.Fatal(err)
	}
	opens := []struct {
		name string
		open func() (*Index, error)
	}{
		{"fresh", func() (*Index, error) {
			k, err := Open("")
			if err == nil {
				_, err = k.Sync(context.Background(), empty)
			}
			return k, err
		}},
		{"earlier statistics", func() (*Index, error) { return Open(dir) }},
		{"earlier statistics, read-only", func() (*Index, error) { return OpenReadOnly(dir) }},
	}
	for _, o := range opens {
		t.Run(o.name, func(t *testing.T) {
			k, err := o.open()
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			for _, tc := range queries {
				if hits, err := k.Search(context.Background(), tc.q); err != nil || len(hits) != 0 {
					t.Errorf("%s: Search(%q) = %v, %v; want no hits, no error", tc.name, tc.q.Text, hits, err)
				}
			}
		})
	}
}
