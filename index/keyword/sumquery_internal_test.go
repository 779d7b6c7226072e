package keyword

import (
	"context"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/indextest"
)

// scoringCatalog is a catalog whose tools differ in length and share
// words, so that length normalisation, IDF and coordination all show.
func scoringCatalog(t *testing.T) *index.Catalog {
	t.Helper()
	return indextest.MustCatalog(t, `{"domains": [{"name": "files", "description": "Files on disk", "tools": [
		{"name": "read_file", "description": "Read a file from disk and return its text", "inputSchema": {"type": "object", "properties": {"path": {"type": "string", "description": "file path to read"}}}},
		{"name": "write_file", "description": "Write text to a file, creating the file when it is missing, replacing it when it exists, in one atomic step that never leaves a partly written file behind", "inputSchema": {"type": "object"}},
		{"name": "list_dir", "description": "List a directory", "inputSchema": {"type": "object"}},
		{"name": "send_mail", "description": "Send a mail message with a file attached", "inputSchema": {"type": "object"}},
		{"name": "weather", "description": "Weather forecast for a city", "inputSchema": {"type": "object"}}]}]}`)
}

func scoresOf(t *testing.T, kw *Index, ctx context.Context, q query.Query) map[string]float64 {
	t.Helper()
	res, err := kw.idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, 100, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, h := range res.Hits {
		out[h.ID] = h.Score
	}
	return out
}

// TestKeywordScoringAsBleve: with Bleve's coordination, query weight and
// length estimate, the sum query scores as Bleve's own disjunction of
// match queries, up to the query norm, one factor for all of a query's
// hits (the sum leaves terms no tool has out of it), which shows the sum
// searcher visits and adds what Bleve's does.
func TestKeywordScoringAsBleve(t *testing.T) {
	kw, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	if _, err := kw.Sync(context.Background(), scoringCatalog(t)); err != nil {
		t.Fatal(err)
	}
	weights := FieldWeights{FieldText: 1, FieldNameWords: 0.5, FieldTextExact: 2, FieldName: 6}
	for _, text := range []string{"read a file", "write the file to disk, then mail the file", "weather", "nothing matches here"} {
		var should []query.Query
		fields := []string{FieldName, FieldNameWords, FieldText, FieldTextExact}
		for _, f := range fields {
			mq := bleve.NewMatchQuery(text)
			if f == FieldName {
				mq = bleve.NewMatchQuery(strings.ToLower(text))
			}
			mq.SetField(f)
			mq.SetBoost(weights[f])
			should = append(should, mq)
		}
		want := scoresOf(t, kw, context.Background(), bleve.NewDisjunctionQuery(should...))
		got := scoresOf(t, kw, context.Background(), &keywordQuery{text: text, fields: fields, weights: weights,
			scoring: Scoring{Coord: true, IDFWeight: true, BleveLengths: true}})
		if len(got) != len(want) {
			t.Fatalf("%q: %d hits, Bleve's query %d", text, len(got), len(want))
		}
		norm := 0.0
		for id, w := range want {
			if norm == 0 {
				norm = got[id] / w
			}
			if math.Abs(got[id]-w*norm) > 1e-9*w*norm {
				t.Errorf("%q: %s scores %v, Bleve's query %v × %v", text, id, got[id], w, norm)
			}
		}
	}
}

// TestKeywordScoringBM25: by default a query scores field weight × BM25
// with the fields' real average lengths: checked against the formula
// (Bleve's BM25 takes the square root of a term's frequency).
func TestKeywordScoringBM25(t *testing.T) {
	kw, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	cat := scoringCatalog(t)
	if _, err := kw.Sync(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	// One field: the text of read_file is [read file read file disk
	// return text path file path read] (11 terms; the analyzer drops
	// "a", "from", "and", "its", "to" and stems).
	lengths := fieldLengths(cat)
	docs := float64(cat.Len())
	avg := math.Ceil(float64(lengths.FieldCardinality[FieldText]) / docs)
	hits, err := kw.Search(context.Background(), Query{Text: "disk", Weights: FieldWeights{FieldText: 2}, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	sort.Strings(ids)
	if strings.Join(ids, " ") != "files__read_file" {
		t.Fatalf("disk matches %v, want files__read_file", ids)
	}
	idf := math.Log(1 + (docs-1+0.5)/(1+0.5))
	const k1, b = 1.2, 0.75
	dl := 11.0
	want := 2 * idf * k1 / (1 + k1*(1-b+b*dl/avg))
	if math.Abs(hits[0].Score-want) > 1e-6 {
		t.Errorf("score of disk in read_file = %v, want %v (avgdl %v)", hits[0].Score, want, avg)
	}
	// Bleve's own length estimate (distinct terms over documents) gives
	// another score: the statistics are in use.
	bleveHits, err := kw.Search(context.Background(), Query{Text: "disk", Weights: FieldWeights{FieldText: 2}, Size: 10, Scoring: Scoring{BleveLengths: true}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(bleveHits[0].Score-hits[0].Score) < 1e-6 {
		t.Errorf("Bleve's length estimate scores as the real lengths do (%v): the statistics are not used", hits[0].Score)
	}
}
