package search

import (
	"context"
	"slices"
	"strings"
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
		m := ShippedConfidenceModels().Models[string(mode)]
		for _, c := range []*Confidence{a, b} {
			if c.Low != (c.Value < m.Threshold) || c.Threshold != m.Threshold || c.Value < 0 || c.Value >= 1 {
				t.Errorf("%s: %+v: Low must be Value < the %s model's threshold %g, Value in [0, 1)", mode, *c, mode, m.Threshold)
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

// TestShippedConfidenceModels: the file of record parses, has a model
// for each mode with a threshold that flags something and not everything,
// and a file without a mode's model or not JSON is refused.
func TestShippedConfidenceModels(t *testing.T) {
	ms := ShippedConfidenceModels()
	if len(ms.Datasets) == 0 || ms.MaxFlagged <= 0 || ms.MaxFlagged >= 1 {
		t.Errorf("shipped models fitted on %v with budget %g: want the datasets and a budget in (0, 1)", ms.Datasets, ms.MaxFlagged)
	}
	for _, mode := range Modes {
		m := ms.Models[string(mode)]
		if m.Threshold <= 0 || m.Threshold >= 1 || m.Value(0, 0) >= m.Threshold || m.Value(1, 1) < m.Threshold {
			t.Errorf("%s model %+v: want no evidence low and full evidence not", mode, m)
		}
	}
	if ms.Models["hybrid"] != bothModel || ms.Models["keyword"] != keywordModel || ms.Models["semantic"] != semanticModel {
		t.Errorf("the models confidenceOf uses are not the shipped ones")
	}
	// Each call is a copy of its own.
	ms.Models["hybrid"] = ConfidenceModel{}
	if ShippedConfidenceModels().Models["hybrid"] != bothModel {
		t.Error("a caller changed the shipped models")
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", `{"models":`, "confidence models:"},
		{"a mode missing", `{"models": {"keyword": {"bias": 1}, "hybrid": {"bias": 1}}}`, "no model for semantic"},
	} {
		if _, err := parseConfidenceModels([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: parseConfidenceModels(%q) error = %v, want %q", tc.name, tc.in, err, tc.want)
		}
	}
}

// TestConfidenceThreshold: an answer is low exactly when its value is
// under the model's threshold, and one without results is low whatever
// the model.
func TestConfidenceThreshold(t *testing.T) {
	r := []Result{{coverage: 0.5, similarity: 0.4}}
	v := bothModel.Value(0.5, 0.4)
	tests := []struct {
		name      string
		threshold float64
		results   []Result
		wantLow   bool
	}{
		{"just above", v + 1e-9, r, true},
		{"at it", v, r, false},
		{"zero, no results", 0, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := bothModel
			m.Threshold = tc.threshold
			c := judge(m, tc.results)
			if c.Low != tc.wantLow || c.Threshold != tc.threshold {
				t.Errorf("judge with threshold %g = %+v, want low %v", tc.threshold, *c, tc.wantLow)
			}
		})
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
		if p == nil {
			p = &Params{}
		}
		p.Fusion = FusionConvex // the learned fusion scales by coverage too, among other things
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
