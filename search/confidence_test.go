package search

import (
	"context"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/embed"
)

// TestExclude: a left-out tool is in no list of any mode, the next ones
// move up, and the answer keeps its length.
func TestExclude(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	ctx := context.Background()
	for _, mode := range Modes {
		full, err := eng.Search(ctx, Request{Query: "list the issues of a repository", Mode: mode, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		top := full.Results[0].Tool.QualifiedName
		if top != "github__list_issues" {
			t.Fatalf("%s: first = %s, want github__list_issues", mode, top)
		}
		without, err := eng.Search(ctx, Request{Query: "list the issues of a repository", Mode: mode, Limit: 3, Exclude: []string{top}})
		if err != nil {
			t.Fatal(err)
		}
		got := names(without.Results)
		if slices.Contains(got, top) {
			t.Errorf("%s: %s left out but answered: %v", mode, top, got)
		}
		if len(got) == 0 || got[0] != names(full.Results)[1] {
			t.Errorf("%s: without %s = %v, want the second of %v first", mode, top, got, names(full.Results))
		}
	}
	// An exact name is no exception.
	resp, err := eng.Search(ctx, Request{Query: "get_forecast", Exclude: []string{"weather__get_forecast"}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names(resp.Results), "weather__get_forecast") {
		t.Errorf("exact name left out but answered: %v", names(resp.Results))
	}
}

// TestConfidence: the first result's confidence falls when the tool that
// fits is left out, Low agrees with the value, and a mode without a
// model for its embedder has none.
func TestConfidence(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	ctx := context.Background()
	q := "who is on call now for the schedule"
	for _, mode := range Modes {
		with, err := eng.Search(ctx, Request{Query: q, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		without, err := eng.Search(ctx, Request{Query: q, Mode: mode, Exclude: []string{"pagerduty__list_oncalls"}})
		if err != nil {
			t.Fatal(err)
		}
		a, b := with.Confidence, without.Confidence
		if a == nil || b == nil {
			t.Fatalf("%s: confidence %v / %v, want both", mode, a, b)
		}
		if !(a.Value > b.Value) {
			t.Errorf("%s: confidence with the tool %.3f, without %.3f: want it to fall", mode, a.Value, b.Value)
		}
		for _, c := range []*Confidence{a, b} {
			if c.Low != (c.Value < 0.5) || c.Value < 0 || c.Value >= 1 {
				t.Errorf("%s: %+v: Low must be Value < 0.5, Value in [0, 1)", mode, *c)
			}
		}
		if len(without.Results) == 0 && (b.Value != 0 || !b.Low) {
			t.Errorf("%s: no results, confidence %+v: want 0 and low", mode, *b)
		}
		if mode != Semantic && !(a.Coverage > b.Coverage) {
			t.Errorf("%s: coverage with the tool %.3f, without %.3f", mode, a.Coverage, b.Coverage)
		}
	}
	other := newTestEngine(t, otherEmbedder{embed.NewBuiltin(embed.BuiltinOptions{})})
	resp, err := other.Search(ctx, Request{Query: q, Mode: Semantic})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Confidence != nil {
		t.Errorf("semantic answer of an embedder without a model has confidence %+v", *resp.Confidence)
	}
	resp, err = other.Search(ctx, Request{Query: q, Mode: Hybrid})
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Confidence; c == nil || c.Value != keywordModel.Value(c.Coverage, 0) {
		t.Errorf("hybrid answer of another embedder: confidence %+v, want the keyword model's", c)
	}
}

// otherEmbedder is the built-in embedder under another provider's name.
type otherEmbedder struct{ embed.Embedder }

func (o otherEmbedder) Info() embed.Info {
	i := o.Embedder.Info()
	i.Provider, i.Model = "ollama", "test-model"
	return i
}

// TestWeakKeywordListCountsLess: the keyword list's weight in the fusion
// is scaled by its best match's coverage, in full from
// KeywordFullCoverage on.
func TestWeakKeywordListCountsLess(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	ctx := context.Background()
	part := func(q string, p *Params) float64 {
		t.Helper()
		resp, err := eng.Search(ctx, Request{Query: q, Explain: true, Params: p})
		if err != nil {
			t.Fatal(err)
		}
		best := 0.0
		for _, r := range resp.Results {
			best = max(best, r.Explanation.Fusion.Keyword)
		}
		return best
	}
	w := DefaultParams().KeywordWeight
	if got := part("get the weather forecast for a city", nil); got != w {
		t.Errorf("a strong keyword list adds up to %g, want the full weight %g", got, w)
	}
	weak := "the quarterly invoices of our suppliers need a careful reconciliation by hand, message"
	if got := part(weak, nil); !(got > 0 && got < w/2) {
		t.Errorf("a keyword list matching one word of a long request adds up to %g, want under %g", got, w/2)
	}
	if got := part(weak, &Params{KeywordFullCoverage: Off}); got != w {
		t.Errorf("with keyword_full_coverage off the weak list adds up to %g, want %g", got, w)
	}
}
