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
// that the catalog holds nothing for it. The chance that the catalog
// holds a tool (search.Confidence.Answerable, what low_confidence reads)
// is good when high on the first and low on the second; AUROC is the
// chance that a query with its tools scores above one without, over all
// such pairs (ties count half). Each result's confidence is good when,
// rank by rank, it is as high on average as the share of results there
// that are relevant (RankCalibration). Leaving tools out of the ranking stands in for removing them
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
	// Ranks is the calibration of every result's confidence, rank by
	// rank, over the queries answered with their tools; RanksBoth over
	// the queries answered with their tools and without, the mix the
	// confidence is fitted for (search.ConfidenceModel: as likely to
	// have a tool in the catalog as not).
	Ranks     []RankCalibration `json:"ranks,omitempty"`
	RanksBoth []RankCalibration `json:"ranks_both,omitempty"`
}

// judged is one query's confidence with its tools (present) and without,
// and each result's, with its tools (ranks) and without (absentRanks).
type judged struct {
	present, absent    search.Confidence
	ranks, absentRanks []rankJudged
}

// rankJudged is a result of a query answered with its tools: its
// evidence, the confidence the server gave it, and whether it is one of
// the query's relevant tools.
type rankJudged struct {
	evidence   search.Evidence
	confidence float64
	relevant   bool
}

// judgeRanks judges each of results of q.
func judgeRanks(q *Query, results []search.Result) []rankJudged {
	rel := map[string]bool{}
	for _, k := range q.Relevant {
		rel[k] = true
	}
	out := make([]rankJudged, len(results))
	for i, r := range results {
		out[i] = rankJudged{evidence: r.Evidence(), confidence: r.Confidence, relevant: rel[r.Tool.Domain+"/"+r.Tool.Name]}
	}
	return out
}

// RankCalibration is how the confidence of the results at one rank
// compares with how often they are right, over the queries answered
// with their tools.
type RankCalibration struct {
	Rank int `json:"rank"`
	// Results counts the queries with a result at Rank.
	Results int `json:"results"`
	// Confidence is their mean confidence, Precision the share of them
	// that are relevant tools: calibrated, the two are alike.
	Confidence float64 `json:"confidence"`
	Precision  float64 `json:"precision"`
	// AUROC is the chance that a relevant result at Rank has a higher
	// confidence than an irrelevant one at Rank (ties count half): how
	// well confidence tells a right tool from noise there; 0 when the
	// rank has only one kind.
	AUROC float64 `json:"auroc"`
}

// rankCalibration sums up, for each rank, the results of the judged
// queries at it: answered with their tools, and also without them when
// both.
func rankCalibration(js []*judged, both bool) []RankCalibration {
	var out []RankCalibration
	for r := 0; ; r++ {
		var pos, neg []float64
		sum := 0.0
		for _, j := range js {
			if j == nil {
				continue
			}
			lists := [][]rankJudged{j.ranks}
			if both {
				lists = append(lists, j.absentRanks)
			}
			for _, l := range lists {
				if r >= len(l) {
					continue
				}
				x := l[r]
				sum += x.confidence
				if x.relevant {
					pos = append(pos, x.confidence)
				} else {
					neg = append(neg, x.confidence)
				}
			}
		}
		n := len(pos) + len(neg)
		if n == 0 {
			return out
		}
		out = append(out, RankCalibration{Rank: r + 1, Results: n, Confidence: round4(sum / float64(n)),
			Precision: round4(float64(len(pos)) / float64(n)), AUROC: round4(AUROC(pos, neg))})
	}
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
		pos, neg = append(pos, j.present.Answerable), append(neg, j.absent.Answerable)
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
		AnswerableFlagged: flagged, UnanswerableCaught: caught, LowPresent: flagged, LowAbsent: caught,
		Ranks: rankCalibration(js, false), RanksBoth: rankCalibration(js, true)}
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

// FitConfidence fits, for each run of rep measured with confidence, the
// two parts of a confidence model (search.ConfidenceModel): a logistic
// model of present (1) against absent (0), on the evidence of the first
// result of each query with and without its tools (coverage and
// similarity for hybrid runs, coverage alone for keyword runs,
// similarity alone for semantic runs): the chance that the catalog holds
// a tool; and a logistic model of whether a result is one of its query's
// relevant tools, on every result of the queries answered with their
// tools: on its evidence, how far it falls short of the first result's,
// and the log of its rank. Every dataset counts alike (its samples weigh
// 1/their number; splits, which repeat their queries, do not count).
// Then it chooses the model's threshold on the first factor (what
// low_confidence judges): the highest (floored to 4 places) at which the mean over
// the datasets of the share of answerable queries flagged is at most
// MaxFlagged. This is how search's shipped confidence models were made.
func FitConfidence(rep *Report) map[string]ConfidenceFit {
	type sample struct {
		ds int
		x  []float64
		y  float64
	}
	type first struct {
		ds      int
		present bool // the query with its tools
		c       search.Confidence
	}
	answers := map[string][]sample{} // the first results, with and without the tools
	results := map[string][]sample{} // every result, with the tools
	firsts := map[string][]first{}
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
				j := q.judged
				if j == nil {
					continue
				}
				firsts[name] = append(firsts[name], first{di, true, j.present}, first{di, false, j.absent})
				for _, c := range []struct {
					conf search.Confidence
					y    float64
				}{{j.present, 1}, {j.absent, 0}} {
					e := search.Evidence{Coverage: c.conf.Coverage, Similarity: c.conf.Similarity}
					answers[name] = append(answers[name], sample{ds: di, x: firstEvidence(run.Mode, e), y: c.y})
				}
				for r, x := range j.ranks {
					y := 0.0
					if x.relevant {
						y = 1
					}
					results[name] = append(results[name], sample{ds: di, x: resultEvidence(run.Mode, r+1, x.evidence, j.ranks[0].evidence), y: y})
				}
			}
		}
	}
	// fit fits ss, each dataset weighing as much as an average one would.
	fit := func(ss []sample) []float64 {
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
			xs[i], ys[i], ws[i] = s.x, s.y, float64(len(ss))/(used*count[s.ds])
		}
		w := fitLogistic(xs, ys, ws, 1e-3)
		for i := range w {
			w[i] = round4(w[i])
		}
		return w
	}
	out := map[string]ConfidenceFit{}
	for name, ss := range answers {
		mode := modes[name]
		m := answerModel(mode, fit(ss))
		if rs := results[name]; len(rs) > 0 {
			m.Result = resultModel(mode, fit(rs))
		}
		// The first results' values, by dataset, with and without the tools.
		present := make([][]float64, len(names))
		absent := make([][]float64, len(names))
		for _, f := range firsts[name] {
			v := 0.0 // an answer without results, whatever the model
			if f.c.Value != 0 {
				// A mode's model weighs only its evidence.
				v = m.Answerable(search.Evidence{Coverage: f.c.Coverage, Similarity: f.c.Similarity})
			}
			if f.present {
				present[f.ds] = append(present[f.ds], v)
			} else {
				absent[f.ds] = append(absent[f.ds], v)
			}
		}
		m.Threshold = chooseThreshold(present, MaxFlagged)
		fit := ConfidenceFit{ConfidenceModel: m, Datasets: map[string]OperatingPoint{}}
		used := 0.0
		for di := range names {
			if len(present[di]) > 0 {
				used++
			}
		}
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

// firstEvidence is what a mode's answer model (ConfidenceModel's own
// weights) reads of a first result's evidence e, in the order of
// answerModel's weights.
func firstEvidence(mode search.Mode, e search.Evidence) []float64 {
	switch mode {
	case search.Keyword:
		return []float64{e.Coverage}
	case search.Semantic:
		return []float64{e.Similarity}
	}
	return []float64{e.Coverage, e.Similarity}
}

// answerModel is the answer model of a mode of weights w (firstEvidence's
// features, then the bias).
func answerModel(mode search.Mode, w []float64) search.ConfidenceModel {
	m := search.ConfidenceModel{Bias: w[len(w)-1]}
	switch mode {
	case search.Keyword:
		m.Coverage = w[0]
	case search.Semantic:
		m.Similarity = w[0]
	default:
		m.Coverage, m.Similarity = w[0], w[1]
	}
	return m
}

// resultEvidence is what a mode's result model reads of the result at
// rank (from 1) of evidence e in an answer whose first result has
// evidence first, in the order of resultModel's weights.
func resultEvidence(mode search.Mode, rank int, e, first search.Evidence) []float64 {
	lr := math.Log(float64(max(rank, 1)))
	switch mode {
	case search.Keyword:
		return []float64{e.Coverage, first.Coverage - e.Coverage, lr}
	case search.Semantic:
		return []float64{e.Similarity, first.Similarity - e.Similarity, lr}
	}
	return []float64{e.Coverage, e.Similarity, first.Coverage - e.Coverage, first.Similarity - e.Similarity, lr}
}

// resultModel is the result model of a mode of weights w
// (resultEvidence's features, then the bias).
func resultModel(mode search.Mode, w []float64) search.ResultModel {
	m := search.ResultModel{Bias: w[len(w)-1]}
	switch mode {
	case search.Keyword:
		m.Coverage, m.CoverageGap, m.Rank = w[0], w[1], w[2]
	case search.Semantic:
		m.Similarity, m.SimilarityGap, m.Rank = w[0], w[1], w[2]
	default:
		m.Coverage, m.Similarity, m.CoverageGap, m.SimilarityGap, m.Rank = w[0], w[1], w[2], w[3], w[4]
	}
	return m
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
	fmt.Fprintln(w, "\nthe chance that the catalog holds a tool (judged from the first result: what low_confidence reads), each query with its tools (answerable) and without (unanswerable); AUROC, and the shares answered low_confidence at the server's threshold:")
	fmt.Fprintln(w)
	writeRows(w, []string{"run", "auroc", "threshold", "answerable flagged", "unanswerable caught"}, rows, markdown)
	rows = nil
	head := []string{"run"}
	for r := 1; r <= shownRanks; r++ {
		head = append(head, fmt.Sprintf("rank %d", r))
	}
	for _, run := range d.Runs {
		c := run.Confidence
		if c == nil {
			continue
		}
		for _, part := range []struct {
			label string
			ranks []RankCalibration
		}{{"with tools", c.Ranks}, {"with and without", c.RanksBoth}} {
			if len(part.ranks) == 0 {
				continue
			}
			row := []string{run.RunName() + ", " + part.label}
			for r := 0; r < shownRanks; r++ {
				cell := "-"
				if r < len(part.ranks) {
					x := part.ranks[r]
					cell = fmt.Sprintf("%.2f / %.2f (%.2f)", x.Confidence, x.Precision, x.AUROC)
				}
				row = append(row, cell)
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nconfidence of each result by rank, over the queries with their tools and over them with and without (the mix the models are fitted for): mean confidence / precision (AUROC of relevant against irrelevant results at the rank); ranks 1-%d, every rank in JSON:\n\n", shownRanks)
	writeRows(w, head, rows, markdown)
}

// shownRanks is the number of ranks the report's table of calibration
// shows.
const shownRanks = 5
