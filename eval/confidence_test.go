package eval

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/search"
)

func TestAUROC(t *testing.T) {
	tests := []struct {
		pos, neg []float64
		want     float64
	}{
		{[]float64{3, 4}, []float64{1, 2}, 1},
		{[]float64{1, 2}, []float64{3, 4}, 0},
		{[]float64{1, 1}, []float64{1, 1}, 0.5},
		{[]float64{2, 4}, []float64{1, 3}, 0.75},  // 3 of 4 pairs
		{[]float64{2, 3}, []float64{2, 1}, 0.875}, // one tie: 3.5 of 4
	}
	for _, tc := range tests {
		if got := AUROC(tc.pos, tc.neg); !near(got, tc.want) {
			t.Errorf("AUROC(%v, %v) = %g, want %g", tc.pos, tc.neg, got, tc.want)
		}
	}
}

// TestFitLogistic recovers the weights of data drawn from a known
// logistic model.
func TestFitLogistic(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	want := []float64{3, -2, 0.5}
	var xs [][]float64
	var ys []float64
	for i := 0; i < 20000; i++ {
		x := []float64{r.NormFloat64(), r.NormFloat64()}
		p := 1 / (1 + math.Exp(-(want[0]*x[0] + want[1]*x[1] + want[2])))
		y := 0.0
		if r.Float64() < p {
			y = 1
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	got := fitLogistic(xs, ys, nil, 1e-3)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 0.15 {
			t.Errorf("weights %v, want about %v", got, want)
			break
		}
	}
	// A sample of weight 2 counts as the same sample twice.
	xs, ys = xs[:500], ys[:500]
	ws := make([]float64, len(xs))
	for i := range ws {
		ws[i] = 1
	}
	ws[0], ws[1] = 2, 2
	twice := fitLogistic(append(xs, xs[0], xs[1]), append(ys, ys[0], ys[1]), nil, 1e-3)
	weighted := fitLogistic(xs, ys, ws, 1e-3)
	for i := range twice {
		if math.Abs(twice[i]-weighted[i]) > 1e-9 {
			t.Errorf("weighted fit %v, want %v (the samples repeated)", weighted, twice)
			break
		}
	}
}

// TestChooseThreshold: the highest threshold (floored to 4 places) within
// the budget of the mean share of answerable queries flagged, each
// dataset counting alike.
func TestChooseThreshold(t *testing.T) {
	tenths := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
	tests := []struct {
		name    string
		present [][]float64
		budget  float64
		want    float64
	}{
		{"one in ten", [][]float64{tenths}, 0.1, 0.2},
		{"two in ten", [][]float64{tenths}, 0.2, 0.3},
		{"none", [][]float64{tenths}, 0, 0.1},
		{"all", [][]float64{tenths}, 1, 1},
		// Pooled, 0.2 would flag 1 of 14 (0.07); as a mean, 1/4 and 0/10
		// is 0.125.
		{"datasets alike", [][]float64{{0.1, 0.2, 0.3, 0.4}, tenths}, 0.1, 0.1},
		{"an empty dataset does not count", [][]float64{{}, tenths}, 0.1, 0.2},
		{"floored", [][]float64{{0.11119, 0.22229, 0.33339}}, 0.34, 0.2222},
		{"no values", nil, 0.1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := chooseThreshold(tc.present, tc.budget); got != tc.want {
				t.Errorf("chooseThreshold(%v, %g) = %g, want %g", tc.present, tc.budget, got, tc.want)
			}
		})
	}
}

// TestConfidenceReport: with Options.Confidence every run of a mode with a
// confidence model reports it, splits included, and FitConfidence fits a
// model per run from the same judgements.
func TestConfidenceReport(t *testing.T) {
	racetest.Plain(t)
	ds, _ := Builtin()
	rep, err := Evaluate(context.Background(), []*Dataset{ds}, Options{
		Runs:       ModeRuns([]search.Mode{search.Keyword, search.Hybrid}),
		Embedder:   embed.NewBuiltin(embed.BuiltinOptions{}),
		Confidence: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range rep.Datasets {
		for _, run := range d.Runs {
			c := run.Confidence
			if c == nil {
				t.Fatalf("%s %s: no confidence", d.Name, run.RunName())
			}
			// Leaving the relevant tools out must make confidence worse
			// than chance would.
			if c.AUROC <= 0.5 || c.UnanswerableCaught <= c.AnswerableFlagged {
				t.Errorf("%s %s: %+v: want AUROC above 0.5 and more low answers without the tools", d.Name, run.RunName(), *c)
			}
			// The old names stay, and the threshold is the server's.
			m := search.ShippedConfidenceModels().Models[string(run.Mode)]
			if c.LowPresent != c.AnswerableFlagged || c.LowAbsent != c.UnanswerableCaught || c.Threshold != m.Threshold || m.Threshold <= 0 {
				t.Errorf("%s %s: %+v: want low_present, low_absent as the new names and the shipped threshold %g", d.Name, run.RunName(), *c, m.Threshold)
			}
		}
	}
	fits := FitConfidence(rep)
	if m := fits["hybrid"]; m.Coverage <= 0 || m.Similarity <= 0 || m.Result.Similarity <= 0 || m.Result.Rank >= 0 {
		t.Errorf("hybrid model %+v: want coverage and similarity to raise confidence, and a lower rank to lower a result's", m)
	}
	if m := fits["keyword"]; m.Coverage <= 0 || m.Similarity != 0 || m.Result.Coverage <= 0 || m.Result.Similarity != 0 || m.Result.Rank >= 0 {
		t.Errorf("keyword model %+v: want coverage alone", m)
	}
	// Every run reports each rank's calibration, and the first rank's
	// results are right more often than the fifth's, and more confident.
	for _, run := range rep.Datasets[0].Runs {
		r := run.Confidence.Ranks
		if len(r) < 5 || r[0].Rank != 1 || r[0].Results == 0 || r[0].Results > rep.Datasets[0].Queries || !(r[0].Precision > r[4].Precision && r[0].Confidence > r[4].Confidence) {
			t.Errorf("%s: ranks %+v: want ranks 1 to 5 at least, the first of each query with results, better and more confident than the fifth", run.RunName(), r)
		}
		if b := run.Confidence.RanksBoth; len(b) < 5 || b[0].Results <= r[0].Results || !(b[0].Precision < r[0].Precision) {
			t.Errorf("%s: ranks with and without the tools %+v: want the queries without their tools too, right less often than with its tools", run.RunName(), b)
		}
	}
	// Each threshold is the highest within the budget (to 4 places): a
	// threshold just above the next answerable query's confidence past
	// it would flag too many.
	for name, fit := range fits {
		if fit.Mean.AnswerableFlagged > MaxFlagged || fit.Threshold <= 0 {
			t.Errorf("%s: %+v: want a threshold that flags at most %g of the answerable queries", name, fit, MaxFlagged)
		}
		var present []float64
		for _, q := range rep.Datasets[0].Runs[runIndex(rep.Datasets[0], name)].perQuery {
			present = append(present, fit.Answerable(search.Evidence{Coverage: q.judged.present.Coverage, Similarity: q.judged.present.Similarity}))
		}
		next := math.Inf(1)
		for _, v := range present {
			if v >= fit.Threshold+1e-4 && v < next {
				next = v
			}
		}
		if shareOf(present, math.Nextafter(next, 2)) <= MaxFlagged {
			t.Errorf("%s: threshold %g, but %g would flag %g, within %g", name, fit.Threshold, next, shareOf(present, math.Nextafter(next, 2)), MaxFlagged)
		}
		if op := fit.Datasets["builtin"]; op.AnswerableFlagged != fit.Mean.AnswerableFlagged || op.UnanswerableCaught <= op.AnswerableFlagged {
			t.Errorf("%s: %+v: one dataset's figures are the mean, and more are caught than flagged", name, fit)
		}
	}

	models, err := ShippableModels(rep, fits)
	if err == nil {
		t.Errorf("ShippableModels without a semantic run = %+v, want an error", models)
	}
	fits["semantic"] = ConfidenceFit{ConfidenceModel: search.ConfidenceModel{Similarity: 1, Threshold: 0.3, Result: search.ResultModel{Similarity: 1}}}
	models, err = ShippableModels(rep, fits)
	if err != nil || models.Models["hybrid"] != fits["hybrid"].ConfidenceModel || models.MaxFlagged != MaxFlagged || len(models.Datasets) != 1 || models.Datasets[0] != "builtin" {
		t.Errorf("ShippableModels = %+v, %v", models, err)
	}
}

func runIndex(d *DatasetReport, name string) int {
	for i, r := range d.Runs {
		if r.RunName() == name {
			return i
		}
	}
	return -1
}

// TestRankCalibration: each rank's mean confidence, share of relevant
// results and AUROC, over the queries that have a result there, with
// their tools and, for RanksBoth, without them too.
func TestRankCalibration(t *testing.T) {
	r := func(conf float64, relevant bool) rankJudged { return rankJudged{confidence: conf, relevant: relevant} }
	js := []*judged{
		{ranks: []rankJudged{r(0.8, true), r(0.3, false)}, absentRanks: []rankJudged{r(0.2, false)}},
		{ranks: []rankJudged{r(0.4, false), r(0.5, true), r(0.1, false)}, absentRanks: []rankJudged{r(0.1, false), r(0.05, false)}},
		nil, // a query without a confidence model's judgement
	}
	tests := []struct {
		name string
		both bool
		want []RankCalibration
	}{
		{"with the tools", false, []RankCalibration{
			{Rank: 1, Results: 2, Confidence: 0.6, Precision: 0.5, AUROC: 1},
			{Rank: 2, Results: 2, Confidence: 0.4, Precision: 0.5, AUROC: 1},
			{Rank: 3, Results: 1, Confidence: 0.1, Precision: 0, AUROC: 0},
		}},
		{"with and without", true, []RankCalibration{
			{Rank: 1, Results: 4, Confidence: 0.375, Precision: 0.25, AUROC: 1},
			{Rank: 2, Results: 3, Confidence: 0.2833, Precision: 0.3333, AUROC: 1},
			{Rank: 3, Results: 1, Confidence: 0.1, Precision: 0, AUROC: 0},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rankCalibration(js, tc.both); !slices.Equal(got, tc.want) {
				t.Errorf("rankCalibration(both %v) = %+v, want %+v", tc.both, got, tc.want)
			}
		})
	}
}
