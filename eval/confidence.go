package eval

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

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

// ConfidenceReport is a run's confidence, measured as above, at the
// threshold of the model that judged its answers (the server's).
type ConfidenceReport struct {
	AUROC float64 `json:"auroc"`
	// Threshold is the model's: answers of confidence under it are
	// low_confidence.
	Threshold float64 `json:"threshold"`
	// AnswerableFlagged is the share of queries answered low_confidence
	// although their tools are in the catalog; UnanswerableCaught the
	// share answered low_confidence when their tools are left out.
	AnswerableFlagged  float64 `json:"answerable_flagged"`
	UnanswerableCaught float64 `json:"unanswerable_caught"`
	// LowPresent and LowAbsent are AnswerableFlagged and
	// UnanswerableCaught under their first names.
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
	threshold := 0.0
	for _, j := range js {
		if j == nil {
			continue
		}
		threshold = j.present.Threshold
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
	flagged, caught := round4(float64(lowP)/n), round4(float64(lowA)/n)
	return &ConfidenceReport{AUROC: round4(AUROC(pos, neg)), Threshold: threshold,
		AnswerableFlagged: flagged, UnanswerableCaught: caught, LowPresent: flagged, LowAbsent: caught}
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

// MaxFlagged is the budget of the thresholds FitConfidence chooses: the
// mean over the datasets of the share of answerable requests (their
// tools in the catalog) flagged low_confidence.
const MaxFlagged = 0.10

// ConfidenceFit is a run's fitted model and how it judges the datasets it
// was fitted on at its threshold.
type ConfidenceFit struct {
	search.ConfidenceModel
	// Datasets has the figures of each dataset, Mean their mean (each
	// dataset counts alike).
	Datasets map[string]OperatingPoint `json:"datasets"`
	Mean     OperatingPoint            `json:"mean"`
}

// OperatingPoint is how a model with its threshold judges a dataset's
// queries with and without their tools.
type OperatingPoint struct {
	AUROC              float64 `json:"auroc"`
	AnswerableFlagged  float64 `json:"answerable_flagged"`
	UnanswerableCaught float64 `json:"unanswerable_caught"`
}

// FitConfidence fits, for each run of rep measured with confidence, a
// logistic model of present (1) against absent (0) on the evidence of
// the first result: coverage and similarity for hybrid runs, coverage
// alone for keyword runs, similarity alone for semantic runs. Every
// dataset counts alike (its queries weigh 1/its size; splits, which
// repeat their queries, do not count). Then it chooses the model's
// threshold: the highest (floored to 4 places) at which the mean over
// the datasets of the share of answerable queries flagged is at most
// MaxFlagged. This is how search's shipped confidence models were made.
func FitConfidence(rep *Report) map[string]ConfidenceFit {
	type sample struct {
		ds   int
		conf search.Confidence
		y    float64
	}
	byRun := map[string][]sample{}
	modes := map[string]search.Mode{}
	var names []string
	for _, d := range rep.Datasets {
		if d.split {
			continue
		}
		di := len(names)
		names = append(names, d.Name)
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
					byRun[name] = append(byRun[name], sample{ds: di, conf: c.conf, y: c.y})
				}
			}
		}
	}
	out := map[string]ConfidenceFit{}
	for name, ss := range byRun {
		count := make([]float64, len(names))
		for _, s := range ss {
			count[s.ds]++
		}
		used := 0.0
		for _, c := range count {
			if c > 0 {
				used++
			}
		}
		xs := make([][]float64, len(ss))
		ys := make([]float64, len(ss))
		ws := make([]float64, len(ss))
		for i, s := range ss {
			// Each dataset weighs as much as an average one would.
			xs[i], ys[i], ws[i] = evidence(modes[name], s.conf), s.y, float64(len(ss))/(used*count[s.ds])
		}
		w := fitLogistic(xs, ys, ws, 1e-3)
		m := search.ConfidenceModel{Bias: round4(w[len(w)-1])}
		switch modes[name] {
		case search.Hybrid:
			m.Coverage, m.Similarity = round4(w[0]), round4(w[1])
		case search.Keyword:
			m.Coverage = round4(w[0])
		case search.Semantic:
			m.Similarity = round4(w[0])
		}
		// The values the model gives, by dataset, with and without the tools.
		present := make([][]float64, len(names))
		absent := make([][]float64, len(names))
		for _, s := range ss {
			v := 0.0 // an answer without results, whatever the model
			if s.conf.Value != 0 {
				v = m.Value(s.conf.Coverage, s.conf.Similarity) // a mode's model weighs only its evidence
			}
			if s.y == 1 {
				present[s.ds] = append(present[s.ds], v)
			} else {
				absent[s.ds] = append(absent[s.ds], v)
			}
		}
		m.Threshold = chooseThreshold(present, MaxFlagged)
		fit := ConfidenceFit{ConfidenceModel: m, Datasets: map[string]OperatingPoint{}}
		for di, dn := range names {
			if len(present[di]) == 0 {
				continue
			}
			op := OperatingPoint{AUROC: round4(AUROC(present[di], absent[di])), AnswerableFlagged: shareBelow(present[di], m.Threshold), UnanswerableCaught: shareBelow(absent[di], m.Threshold)}
			fit.Datasets[dn] = op
			fit.Mean.AUROC += op.AUROC / used
			fit.Mean.AnswerableFlagged += op.AnswerableFlagged / used
			fit.Mean.UnanswerableCaught += op.UnanswerableCaught / used
		}
		fit.Mean = OperatingPoint{AUROC: round4(fit.Mean.AUROC), AnswerableFlagged: round4(fit.Mean.AnswerableFlagged), UnanswerableCaught: round4(fit.Mean.UnanswerableCaught)}
		out[name] = fit
	}
	return out
}

// chooseThreshold returns the highest threshold t, floored to 4 places,
// at which the mean over the datasets (each a list of answerable
// queries' confidences) of the share under t is at most budget.
func chooseThreshold(present [][]float64, budget float64) float64 {
	var sets [][]float64
	var cands []float64
	for _, vs := range present {
		if len(vs) > 0 {
			sets = append(sets, vs)
			cands = append(cands, vs...)
		}
	}
	if len(cands) == 0 {
		return 0
	}
	sort.Float64s(cands)
	meanFlagged := func(t float64) float64 {
		sum := 0.0
		for _, vs := range sets {
			sum += shareOf(vs, t)
		}
		return sum / float64(len(sets))
	}
	// The share under t only grows with t, and changes only just above
	// a value: the highest t within budget is one of the values (the
	// first is always within it: nothing is under it).
	i := sort.Search(len(cands), func(i int) bool { return meanFlagged(cands[i]) > budget })
	return math.Floor(cands[i-1]*1e4) / 1e4
}

// shareOf is the share of vs under t; shareBelow the same, rounded to 4
// places.
func shareOf(vs []float64, t float64) float64 {
	n := 0
	for _, v := range vs {
		if v < t {
			n++
		}
	}
	return float64(n) / float64(len(vs))
}

func shareBelow(vs []float64, t float64) float64 { return round4(shareOf(vs, t)) }

// ShippableModels turns the fits of a report's keyword, semantic and
// hybrid runs into the file of record search judges answers with
// (search.ConfidenceModels): the runs must be those modes under their own
// names, the semantic and hybrid ones of the built-in embedder.
func ShippableModels(rep *Report, fits map[string]ConfidenceFit) (search.ConfidenceModels, error) {
	out := search.ConfidenceModels{MaxFlagged: MaxFlagged, Models: map[string]search.ConfidenceModel{}}
	for _, d := range rep.Datasets {
		if !d.split {
			out.Datasets = append(out.Datasets, d.Name)
		}
	}
	for _, mode := range search.Modes {
		fit, ok := fits[string(mode)]
		if !ok {
			return out, fmt.Errorf("no %s run measured with confidence: run the modes keyword, semantic and hybrid", mode)
		}
		for _, d := range rep.Datasets {
			for _, run := range d.Runs {
				if run.RunName() == string(mode) && (run.Mode != mode || mode != search.Keyword && !strings.HasPrefix(run.Embedder, "builtin/")) {
					return out, fmt.Errorf("run %s on %s is mode %s with embedder %s: the shipped models judge the modes of the built-in embedder", run.RunName(), d.Name, run.Mode, run.Embedder)
				}
			}
		}
		out.Models[string(mode)] = fit.ConfidenceModel
	}
	return out, nil
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
// regression, each sample weighing ws[i] (nil: 1), with an L2 penalty l2
// on the weights, by Newton's method.
func fitLogistic(xs [][]float64, ys, ws []float64, l2 float64) []float64 {
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
			wk := 1.0
			if ws != nil {
				wk = ws[k]
			}
			g.AddScaledVec(g, wk*(p-ys[k]), row)
			h.SymRankOne(h, wk*p*(1-p), row)
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

// writeConfidence tabulates the runs' confidence, when measured: AUROC,
// and at the threshold of the model that judged them (the server's) the
// shares of answerable queries flagged and of unanswerable ones caught.
func writeConfidence(w io.Writer, d *DatasetReport, markdown bool) {
	var rows [][]string
	for _, run := range d.Runs {
		if c := run.Confidence; c != nil {
			rows = append(rows, []string{run.RunName(), fmt.Sprintf("%.3f", c.AUROC), fmt.Sprintf("%.4f", c.Threshold), fmt.Sprintf("%.3f", c.AnswerableFlagged), fmt.Sprintf("%.3f", c.UnanswerableCaught)})
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nconfidence of the first result, each query with its tools (answerable) and without (unanswerable); AUROC, and the shares answered low_confidence at the server's threshold:")
	fmt.Fprintln(w)
	writeRows(w, []string{"run", "auroc", "threshold", "answerable flagged", "unanswerable caught"}, rows, markdown)
}
