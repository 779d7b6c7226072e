package search

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/embed"
)

var learnedQueries = []string{
	"create a github issue",
	"post a message to a slack channel",
	"list the open pull requests and then send a summary to the team channel",
	"post_message",
	"weather",
}

// TestConvexModelRanksAsConvex: the learned fusion with ConvexModel and no
// adaptation ranks and scores every request exactly as convex fusion does,
// so that a fit starting there starts from the shipped ranking.
func TestConvexModelRanksAsConvex(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	m := ConvexModel(Params{})
	for _, q := range learnedQueries {
		convex, err := eng.Search(context.Background(), Request{Query: q, Limit: 20, Params: &Params{Fusion: FusionConvex}})
		if err != nil {
			t.Fatal(err)
		}
		learned, err := eng.Search(context.Background(), Request{Query: q, Limit: 20, Params: &Params{Fusion: FusionLearned, FusionModel: &m}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names(convex.Results), names(learned.Results)) {
			t.Fatalf("%q: learned(convex model) = %v, convex = %v", q, names(learned.Results), names(convex.Results))
		}
		for i := range convex.Results {
			if d := convex.Results[i].Score - learned.Results[i].Score; math.Abs(d) > 1e-9 {
				t.Errorf("%q: %s scores %v learned, %v convex", q, convex.Results[i].Tool.QualifiedName, learned.Results[i].Score, convex.Results[i].Score)
			}
		}
	}
}

// TestFusionInputsRankAsSearch: what a fit ranks (FusionInputs.Scores)
// is what Search answers, under the shipped model and under another.
func TestFusionInputsRankAsSearch(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	other := ConvexModel(Params{})
	other.Weights[evName] = 0.7
	other.Keyword[shWords] = 0.8
	other.Semantic[shAgree10] = -1.5
	for _, m := range []*FusionModel{nil, &other} {
		for _, q := range learnedQueries {
			resp, err := eng.Search(context.Background(), Request{Query: q, Limit: 20, Params: &Params{Fusion: FusionLearned, FusionModel: m}})
			if err != nil {
				t.Fatal(err)
			}
			in, err := eng.FusionInputs(context.Background(), Request{Query: q, Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			model := m
			if model == nil {
				model = &builtinFusion
			}
			scores := in.Scores(model, nil)
			var got []string
			for _, i := range order(scores) {
				got = append(got, in.IDs()[i])
			}
			if len(got) > 20 {
				got = got[:20]
			}
			if !slices.Equal(got, names(resp.Results)) {
				t.Errorf("%q (model %v): inputs rank %v, Search %v", q, m != nil, got, names(resp.Results))
			}
		}
	}
}

// TestLearnedAdaptsPerRequest: the request's shape moves the weights: a
// positive keyword coefficient on the request's length raises the keyword
// evidence of a long request and lowers that of a short one, against the
// centre.
func TestLearnedAdaptsPerRequest(t *testing.T) {
	in := &FusionInputs{ids: []string{"k", "s"}, ranks: make([][2]int, 2), ev: make([][numEvidence]float64, 2), boost: make([]float64, 2), strength: 1}
	in.ev[0][evKeyword] = 1  // the keyword list's best
	in.ev[1][evSemantic] = 1 // the semantic list's best
	m := ConvexModel(Params{})
	m.Weights[evKeyword] = 1
	m.Center[shWords] = 2
	m.Keyword[shWords] = 1
	first := func(words float64) string {
		in.shape[shWords] = words
		s := in.Scores(&m, nil)
		return in.ids[order(s)[0]]
	}
	if got := first(3); got != "k" {
		t.Errorf("long request: %s first, want the keyword list's best", got)
	}
	if got := first(1); got != "s" {
		t.Errorf("short request: %s first, want the semantic list's best", got)
	}
	if mk, _ := in.multipliers(&m); math.Abs(mk-math.Exp(-1)) > 1e-12 {
		t.Errorf("keyword multiplier %v, want e^-1", mk)
	}
	// A weak keyword list (strength 0.5) counts 0.25 at power 2.
	in.strength, in.shape[shWords], m.KeywordPower = 0.5, 2, 2
	if mk, ms := in.multipliers(&m); math.Abs(mk-0.25) > 1e-12 || ms != 1 {
		t.Errorf("multipliers at power 2 = %v, %v, want 0.25, 1", mk, ms)
	}
}

// TestPeak: (best − mean)/std, 0 when it means nothing.
func TestPeak(t *testing.T) {
	if p := peak(4, func(i int) float64 { return []float64{4, 1, 1, 2}[i] }); math.Abs(p-1.6329932) > 1e-6 {
		t.Errorf("peak = %v", p)
	}
	if p := peak(3, func(int) float64 { return 1 }); p != 0 {
		t.Errorf("peak of equal scores = %v, want 0", p)
	}
	if p := peak(1, func(int) float64 { return 1 }); p != 0 {
		t.Errorf("peak of one = %v, want 0", p)
	}
}
