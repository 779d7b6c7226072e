package eval

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/toolscout/toolscout/search"
)

// Confidence is measured on every query twice: as it is, and with its
// relevant tools left out of the ranking (search.Request.Exclude), so
// that the catalog holds nothing for it. A good confidence is high on
// the first and low on the second; AUROC is the chance that a query with
// its tools scores above one without, over all such pairs (ties count
// half). Leaving tools out of the ranking stands in for removing them
// from the catalog: BM25's term statistics and the domains' centroids
// still count them, a difference of one to a few tools in each.

// ConfidenceReport is a run's confidence, measured as above.
type ConfidenceReport struct {
	AUROC float64 `json:"auroc"`
	// LowPresent is the share of queries answered with low_confidence
	// although their tools are in the catalog; LowAbsent the share with
	// low_confidence when they are left out.
	LowPresent float64 `json:"low_present"`
	LowAbsent  float64 `json:"low_absent"`
}

// judged is one query's confidence with its tools (present) and without.
type judged struct {
	present, absent search.Confidence
}

// confidenceReport sums up the judgements of a run's queries; nil when it
// has none.
func confidenceReport(js []*judged) *ConfidenceReport {
	var pos, neg []float64
	lowP, lowA := 0, 0
	for _, j := range js {
		if j == nil {
			continue
		}
		pos, neg = append(pos, j.present.Value), append(neg, j.absent.Value)
		if j.present.Low {
			lowP++
		}
		if j.absent.Low {
			lowA++
		}
	}
	if len(pos) == 0 {
		return nil
	}
	n := float64(len(pos))
	return &ConfidenceReport{AUROC: round4(AUROC(pos, neg)), LowPresent: round4(float64(lowP) / n), LowAbsent: round4(float64(lowA) / n)}
}

// AUROC is the area under the ROC curve of scores pos (positives) against
// neg: the chance that a positive scores above a negative, ties counting
// half (the Mann-Whitney U statistic over |pos|·|neg|).
func AUROC(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return 0
	}
	type scored struct {
		v   float64
		pos bool
	}
	all := make([]scored, 0, len(pos)+len(neg))
	for _, v := range pos {
		all = append(all, scored{v, true})
	}
	for _, v := range neg {
		all = append(all, scored{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	rankSum := 0.0 // of the positives, ranks from 1, ties at their mean
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		mid := float64(i+j+1) / 2
		for k := i; k < j; k++ {
			if all[k].pos {
				rankSum += mid
			}
		}
		i = j
	}
	p, q := float64(len(pos)), float64(len(neg))
	return (rankSum - p*(p+1)/2) / (p * q)
}

// FitConfidence fits, for each run of rep measured with confidence, a
// logistic model of present (1) against absent (0) on the evidence of
// the first result: coverage and similarity for hybrid runs, coverage
// alone for keyword runs, similarity alone for semantic runs. Every
// dataset counts (not their splits, which repeat their queries). This is
// how search's shipped confidence models were made.
func FitConfidence(rep *Report) map[string]search.ConfidenceModel {
	type sample struct {
		x []float64
		y float64
	}
	byRun := map[string][]sample{}
	modes := map[string]search.Mode{}
	for _, d := range rep.Datasets {
		if d.split {
			continue
		}
		for _, run := range d.Runs {
			name := run.RunName()
			modes[name] = run.Mode
			for _, q := range run.perQuery {
				if q.judged == nil {
					continue
				}
				for _, c := range []struct {
					conf search.Confidence
					y    float64
				}{{q.judged.present, 1}, {q.judged.absent, 0}} {
					byRun[name] = append(byRun[name], sample{evidence(run.Mode, c.conf), c.y})
				}
			}
		}
	}
	out := map[string]search.ConfidenceModel{}
	for name, ss := range byRun {
		xs := make([][]float64, len(ss))
		ys := make([]float64, len(ss))
		for i, s := range ss {
			xs[i], ys[i] = s.x, s.y
		}
		w := fitLogistic(xs, ys, 1e-3)
		m := search.ConfidenceModel{Bias: round4(w[len(w)-1])}
		switch modes[name] {
		case search.Hybrid:
			m.Coverage, m.Similarity = round4(w[0]), round4(w[1])
		case search.Keyword:
			m.Coverage = round4(w[0])
		case search.Semantic:
			m.Similarity = round4(w[0])
		}
		out[name] = m
	}
	return out
}

// evidence is what a mode's model reads of a confidence.
func evidence(mode search.Mode, c search.Confidence) []float64 {
	switch mode {
	case search.Keyword:
		return []float64{c.Coverage}
	case search.Semantic:
		return []float64{c.Similarity}
	}
	return []float64{c.Coverage, c.Similarity}
}

// fitLogistic fits weights (one per feature, then the bias) of a logistic
// regression with an L2 penalty l2 on the weights, by Newton's method.
func fitLogistic(xs [][]float64, ys []float64, l2 float64) []float64 {
	if len(xs) == 0 {
		return []float64{0}
	}
	n := len(xs[0]) + 1
	w := mat.NewVecDense(n, nil)
	row := mat.NewVecDense(n, nil)
	for iter := 0; iter < 100; iter++ {
		g := mat.NewVecDense(n, nil)
		h := mat.NewSymDense(n, nil)
		for k, x := range xs {
			for i, v := range x {
				row.SetVec(i, v)
			}
			row.SetVec(n-1, 1)
			p := 1 / (1 + math.Exp(-mat.Dot(w, row)))
			g.AddScaledVec(g, p-ys[k], row)
			h.SymRankOne(h, p*(1-p), row)
		}
		for i := 0; i < n-1; i++ {
			g.SetVec(i, g.AtVec(i)+l2*w.AtVec(i))
			h.SetSym(i, i, h.At(i, i)+l2)
		}
		var step mat.VecDense
		if err := step.SolveVec(h, g); err != nil {
			break // singular: no better step
		}
		w.SubVec(w, &step)
		if mat.Norm(&step, math.Inf(1)) < 1e-9 {
			break
		}
	}
	return w.RawVector().Data
}
