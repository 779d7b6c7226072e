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
			if c.Low != (c.Answerable < m.Threshold) || c.Threshold != m.Threshold || c.Value < 0 || c.Value > c.Answerable || c.Answerable >= 1 {
				t.Errorf("%s: %+v: Low must be Answerable < the %s model's threshold %g, Value in [0, Answerable], Answerable under 1", mode, *c, mode, m.Threshold)
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
	if c := resp.Confidence; c == nil || c.Value != keywordModel.Value(c.Coverage, 0) || resp.Results[1].Confidence == 0 {
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
		none, full := Evidence{}, Evidence{Coverage: 1, Similarity: 1}
		if m.Threshold <= 0 || m.Threshold >= 1 || m.Answerable(none) >= m.Threshold || m.Answerable(full) < m.Threshold {
			t.Errorf("%s model %+v: want no evidence low and full evidence not", mode, m)
		}
		// A result further down, or further behind the first, is less
		// likely the one.
		half := Evidence{Coverage: 0.5, Similarity: 0.5}
		if !(m.Result.Value(1, full, full) > m.Result.Value(2, full, full) && m.Result.Value(2, full, full) > m.Result.Value(2, half, full)) {
			t.Errorf("%s result model %+v: want rank and a gap behind the first to lower the chance", mode, m.Result)
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
		{"a mode missing", `{"models": {"keyword": {"bias": 1, "result": {"bias": 1}}, "hybrid": {"bias": 1, "result": {"bias": 1}}}}`, "no model for semantic"},
		{"no result model", `{"models": {"keyword": {"bias": 1}, "hybrid": {"bias": 1, "result": {"bias": 1}}, "semantic": {"bias": 1, "result": {"bias": 1}}}}`, "the keyword model has no result model"},
	} {
		if _, err := parseConfidenceModels([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: parseConfidenceModels(%q) error = %v, want %q", tc.name, tc.in, err, tc.want)
		}
	}
}

// TestConfidenceThreshold: an answer is low exactly when the chance that
// the catalog holds a tool is under the model's threshold, and one
// without results is low whatever the model.
func TestConfidenceThreshold(t *testing.T) {
	r := []Result{{coverage: 0.5, similarity: 0.4}}
	v := bothModel.Answerable(Evidence{Coverage: 0.5, Similarity: 0.4})
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

// TestResultConfidence: every result of every mode has a confidence, at
// most the chance that the catalog holds a tool and at most the one
// before it; a second result as good as the first keeps much of the
// first's confidence, a result far behind it little; and an answer is
// low only when no result's confidence reaches the threshold.
func TestResultConfidence(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	ctx := context.Background()
	for _, mode := range Modes {
		for _, q := range []string{"list the issues of a repository", "search the issues and messages", "send a message to the team channel"} {
			resp, err := eng.Search(ctx, Request{Query: q, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			c := resp.Confidence
			if c == nil || len(resp.Results) < 2 {
				t.Fatalf("%s %q: confidence %v, %d results: want a confidence and several results", mode, q, c, len(resp.Results))
			}
			for i, r := range resp.Results {
				if r.Confidence <= 0 || r.Confidence > c.Answerable || i > 0 && r.Confidence > resp.Results[i-1].Confidence {
					t.Errorf("%s %q: result %d (%s) confidence %g: want in (0, %g] and at most the one before", mode, q, i+1, r.Tool.QualifiedName, r.Confidence, c.Answerable)
				}
				if c.Low && r.Confidence >= c.Threshold {
					t.Errorf("%s %q: low answer, but result %d has confidence %g, at the threshold %g", mode, q, i+1, r.Confidence, c.Threshold)
				}
			}
			if c.Value != resp.Results[0].Confidence {
				t.Errorf("%s %q: answer's value %g, first result's %g", mode, q, c.Value, resp.Results[0].Confidence)
			}
		}
	}
	for _, mode := range Modes {
		m := ShippedConfidenceModels().Models[string(mode)]
		first := Evidence{Coverage: 0.6, Similarity: 0.6}
		far := Evidence{Coverage: 0.2, Similarity: 0.2}
		rs := []Result{{coverage: first.Coverage, similarity: first.Similarity}, {coverage: first.Coverage, similarity: first.Similarity}, {coverage: far.Coverage, similarity: far.Similarity}}
		judge(m, rs)
		if close, noise := rs[1].Confidence, rs[2].Confidence; !(close > 2*noise) || close > rs[0].Confidence {
			t.Errorf("%s: a second as good as the first %g (first %g), one far behind %g: want the close second well above the far one", mode, close, rs[0].Confidence, noise)
		}
	}
}
