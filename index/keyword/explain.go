package keyword

import (
	"sort"
	"strings"

	blevesearch "github.com/blevesearch/bleve/v2/search"
)

// TermScore is one query term's share of a tool's BM25 score: the field
// it matched, the term as indexed, and what it added to the score (coord
// factors applied, so the shares sum to the score).
type TermScore struct {
	Field string  `json:"field"`
	Term  string  `json:"term"`
	Score float64 `json:"score"`
}

// termScores flattens Bleve's explanation tree into each matched term's
// share of the score, largest first. The tree's weight(...) leaves carry
// a term's BM25 weight; the products above them multiply it by coord
// factors, which are carried down.
func termScores(e *blevesearch.Explanation) []TermScore {
	var out []TermScore
	var walk func(e *blevesearch.Explanation, mult float64)
	walk = func(e *blevesearch.Explanation, mult float64) {
		switch {
		case strings.HasPrefix(e.Message, "weight("), strings.HasPrefix(e.Message, "fieldWeight("):
			// A term of boost 1 is scored without the weight(...) node
			// above its fieldWeight(...).
			spec := strings.TrimPrefix(strings.TrimPrefix(e.Message, "weight("), "fieldWeight(")
			if i := strings.Index(spec, " in "); i >= 0 {
				spec = spec[:i]
			}
			if i := strings.LastIndexByte(spec, '^'); i >= 0 {
				spec = spec[:i]
			}
			field, term, ok := strings.Cut(spec, ":")
			if ok {
				out = append(out, TermScore{Field: field, Term: term, Score: e.Value * mult})
			}
		case strings.HasPrefix(e.Message, "product of"):
			for i, c := range e.Children {
				m := mult
				for j, o := range e.Children {
					if j != i {
						m *= o.Value
					}
				}
				walk(c, m)
			}
		case strings.HasPrefix(e.Message, "sum of"):
			for _, c := range e.Children {
				walk(c, mult)
			}
		}
	}
	if e != nil {
		walk(e, 1)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}
