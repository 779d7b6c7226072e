package eval

import (
	"math"
	"slices"
	"strings"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/text"
	"github.com/toolscout/toolscout/search"
)

// BM25 is the eval strategy "bm25": the plain Okapi BM25 yardstick that
// every other run is held to. It is not a search mode: toolscout never
// serves it, and it shares no code with the keyword index, so that a
// change to toolscout's ranking cannot move the yardstick.
const BM25 search.Mode = "bm25"

// plainBM25 is textbook single-field Okapi BM25 (k1 1.2, b 0.75, IDF
// log(1 + (N − n + 0.5)/(n + 0.5))) over each tool's name, description and
// parameter text (names and descriptions), split like identifiers,
// lower-cased, English stop words dropped; no stemming, field boosts,
// fuzzy terms, coordination factor or truncation. A query term counts once
// per occurrence, as in the textbook sum over the query's terms.
//
// Of the variants measured (BENCHMARKS.md: with and without parameter
// descriptions, stemming and stop words), this one is the strongest on
// sealtools-dev (nDCG@10 0.900, where the issue that set the yardstick
// measured 0.894) and close to the strongest on metatool-dev, so holding
// toolscout to it is the stricter test.
type plainBM25 struct {
	ids      []string // domain/tool
	postings map[string][]posting
	dl       []float64
	avgdl    float64
}

type posting struct {
	doc int
	tf  float64
}

// bm25Text is a tool's document for the yardstick.
func bm25Text(t *index.Tool) string {
	parts := []string{t.Name, t.Description}
	for _, p := range t.Params() {
		parts = append(parts, p.Name, p.Description)
	}
	return strings.Join(parts, " ")
}

// bm25Terms splits s like identifiers (at case changes and punctuation),
// lower-cased, without stop words.
func bm25Terms(s string) []string {
	ws := text.SplitIdentifier(s)
	out := ws[:0]
	for _, w := range ws {
		if !text.Stopword(w) {
			out = append(out, w)
		}
	}
	return out
}

func newPlainBM25(cat *index.Catalog) *plainBM25 {
	p := &plainBM25{postings: map[string][]posting{}}
	for _, t := range cat.Tools() {
		doc := len(p.ids)
		tf := map[string]int{}
		ts := bm25Terms(bm25Text(t))
		for _, w := range ts {
			tf[w]++
		}
		for _, w := range slices.Sorted(func(yield func(string) bool) {
			for w := range tf {
				if !yield(w) {
					return
				}
			}
		}) {
			p.postings[w] = append(p.postings[w], posting{doc, float64(tf[w])})
		}
		p.ids = append(p.ids, t.Domain+"/"+t.Name)
		p.dl = append(p.dl, float64(len(ts)))
		p.avgdl += float64(len(ts))
	}
	if len(p.ids) > 0 {
		p.avgdl /= float64(len(p.ids))
	}
	return p
}

// scores returns the BM25 score of q for every document it matches.
func (p *plainBM25) scores(q string) map[int]float64 {
	const k1, b = 1.2, 0.75
	docs := float64(len(p.ids))
	scores := map[int]float64{}
	for _, w := range bm25Terms(q) {
		ps := p.postings[w]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (docs-df+0.5)/(df+0.5))
		for _, ps := range ps {
			scores[ps.doc] += idf * ps.tf * (k1 + 1) / (ps.tf + k1*(1-b+b*p.dl[ps.doc]/p.avgdl))
		}
	}
	return scores
}

// score returns the BM25 score of q for document doc.
func (p *plainBM25) score(q string, doc int) float64 { return p.scores(q)[doc] }

// rank returns the n best tools for q (domain/tool), best first; ties go
// by catalog order. Tools that match no term are not returned.
func (p *plainBM25) rank(q string, n int) []string {
	ids, _ := p.rankScored(q, n)
	return ids
}

// rankScored is rank with each tool's BM25 score.
func (p *plainBM25) rankScored(q string, n int) ([]string, []float64) {
	scores := p.scores(q)
	order := make([]int, 0, len(scores))
	for d := range scores {
		order = append(order, d)
	}
	slices.SortFunc(order, func(a, c int) int {
		switch {
		case scores[a] > scores[c]:
			return -1
		case scores[a] < scores[c]:
			return 1
		}
		return a - c
	})
	out := make([]string, 0, min(n, len(order)))
	vals := make([]float64, 0, cap(out))
	for _, d := range order[:min(n, len(order))] {
		out = append(out, p.ids[d])
		vals = append(vals, scores[d])
	}
	return out, vals
}
