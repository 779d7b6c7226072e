package eval

import (
	"context"
	"math"
	"os"
	"sort"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/text"
	"github.com/toolscout/toolscout/search"
)

// plainBM25 is the yardstick for the keyword path: textbook single-field
// Okapi BM25 (k1 = 1.2, b = 0.75, IDF log(1 + (N - n + 0.5)/(n + 0.5)))
// over each tool's document text, split like identifiers, lower-cased,
// optionally Porter-stemmed; no field boosts, no stop words, no
// coordination factor.
type plainBM25 struct {
	stem  bool
	ids   []string
	tf    []map[string]int
	dl    []float64
	avgdl float64
	df    map[string]int
}

func (p *plainBM25) terms(s string) []string {
	ws := text.SplitIdentifier(s)
	if p.stem {
		for i, w := range ws {
			ws[i] = text.Stem(w)
		}
	}
	return ws
}

func newPlainBM25(cat *index.Catalog, stem bool) *plainBM25 {
	p := &plainBM25{stem: stem, df: map[string]int{}}
	for _, t := range cat.Tools() {
		tf := map[string]int{}
		ts := p.terms(index.DocumentText(t))
		for _, w := range ts {
			tf[w]++
		}
		for w := range tf {
			p.df[w]++
		}
		p.ids = append(p.ids, t.Domain+"/"+t.Name)
		p.tf = append(p.tf, tf)
		p.dl = append(p.dl, float64(len(ts)))
		p.avgdl += float64(len(ts))
	}
	p.avgdl /= float64(len(p.ids))
	return p
}

func (p *plainBM25) rank(q string) []string {
	const k1, b = 1.2, 0.75
	n := float64(len(p.ids))
	scores := make([]float64, len(p.ids))
	for _, w := range p.terms(q) {
		df := float64(p.df[w])
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for i, tf := range p.tf {
			if f := float64(tf[w]); f > 0 {
				scores[i] += idf * f * (k1 + 1) / (f + k1*(1-b+b*p.dl[i]/p.avgdl))
			}
		}
	}
	order := make([]int, len(p.ids))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, c int) bool { return scores[order[a]] > scores[order[c]] })
	var out []string
	for _, i := range order[:min(10, len(order))] {
		if scores[i] > 0 {
			out = append(out, p.ids[i])
		}
	}
	return out
}

// TestKeywordMatchesPlainBM25 holds keyword mode to the textbook BM25
// yardstick on the long-task queries, where many query terms used to let
// Bleve's coordination factor favour tools that match many words a little
// over tools that match a few words well.
func TestKeywordMatchesPlainBM25(t *testing.T) {
	loads := []func() (*Dataset, error){BuiltinLong, Builtin}
	if dir := os.Getenv("TOOLSCOUT_EXTRA_DATASET"); dir != "" {
		loads = append(loads, func() (*Dataset, error) { return LoadDir(dir) })
	}
	for _, load := range loads {
		ds, err := load()
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Evaluate(context.Background(), []*Dataset{ds}, Options{Runs: ModeRuns([]search.Mode{search.Keyword})})
		if err != nil {
			t.Fatal(err)
		}
		keyword := rep.Datasets[0].Runs[0].Metrics["ndcg@10"]
		for _, stem := range []bool{false, true} {
			p := newPlainBM25(ds.Catalog, stem)
			var sum float64
			for i := range ds.Queries {
				sum += NDCGAt(&ds.Queries[i], p.rank(ds.Queries[i].Query), 10)
			}
			yard := sum / float64(len(ds.Queries))
			t.Logf("%s: keyword nDCG@10 %.4f, plain BM25 (stem %v) %.4f", ds.Name, keyword, stem, yard)
			if ds.Name == "builtin-long" && keyword < yard-0.01 {
				t.Errorf("%s: keyword nDCG@10 %.4f below plain BM25 (stem %v) %.4f", ds.Name, keyword, stem, yard)
			}
		}
	}
}
