package eval

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/toolscout/toolscout/embed"
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
	got := fitLogistic(xs, ys, 1e-3)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 0.15 {
			t.Errorf("weights %v, want about %v", got, want)
			break
		}
	}
}

// TestConfidenceReport: with Options.Confidence every run of a mode with a
// confidence model reports it, splits included, and FitConfidence fits a
// model per run from the same judgements.
func TestConfidenceReport(t *testing.T) {
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
			if c.AUROC <= 0.5 || c.LowAbsent <= c.LowPresent {
				t.Errorf("%s %s: %+v: want AUROC above 0.5 and more low answers without the tools", d.Name, run.RunName(), *c)
			}
		}
	}
	fits := FitConfidence(rep)
	if m := fits["hybrid"]; m.Coverage <= 0 || m.Similarity <= 0 {
		t.Errorf("hybrid model %+v: want coverage and similarity to raise confidence", m)
	}
	if m := fits["keyword"]; m.Coverage <= 0 || m.Similarity != 0 {
		t.Errorf("keyword model %+v: want coverage alone", m)
	}
}
