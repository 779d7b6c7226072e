package eval

import (
	"math"
	"sort"

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
// how search.ConfidenceModels were made.
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
	w := make([]float64, n)
	row := make([]float64, n)
	for iter := 0; iter < 100; iter++ {
		g := make([]float64, n)
		h := make([][]float64, n)
		for i := range h {
			h[i] = make([]float64, n+1)
		}
		for k, x := range xs {
			copy(row, x)
			row[n-1] = 1
			z := 0.0
			for i := range row {
				z += w[i] * row[i]
			}
			p := 1 / (1 + math.Exp(-z))
			for i := range row {
				g[i] += (p - ys[k]) * row[i]
				for j := range row {
					h[i][j] += p * (1 - p) * row[i] * row[j]
				}
			}
		}
		for i := 0; i < n-1; i++ {
			g[i] += l2 * w[i]
			h[i][i] += l2
		}
		step := solve(h, g)
		biggest := 0.0
		for i := range w {
			w[i] -= step[i]
			biggest = max(biggest, math.Abs(step[i]))
		}
		if biggest < 1e-9 {
			break
		}
	}
	return w
}

// solve returns x with a·x = b by Gaussian elimination with partial
// pivoting; a has room for one more column, which it uses.
func solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	for i := range a {
		a[i][n] = b[i]
	}
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		if a[c][c] == 0 {
			continue
		}
		for r := 0; r < n; r++ {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k <= n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	x := make([]float64, n)
	for i := range x {
		if a[i][i] != 0 {
			x[i] = a[i][n] / a[i][i]
		}
	}
	return x
}
