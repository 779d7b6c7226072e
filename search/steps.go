package search

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"unicode"

	"github.com/toolscout/toolscout/index/keyword"
	"golang.org/x/sync/errgroup"
)

// A request that describes several steps ("find the trial data for drug
// X, then chart the results and save them as a PDF") needs a tool for
// each, and one ranking of the whole request gives the top places to the
// words several steps share. So a request of two or more steps is split
// into them, and each result says which step it fits (labelSteps); with
// StepDepth, the answer takes the best tools of every step first, in turns
// (each step's best, then each step's second, ..., StepDepth deep), then
// the whole request's ranking (composeSteps), and with StepWeight the
// steps' rankings are fused with the whole's. Both lost on the dev sets
// (BENCHMARKS.md) and are off by default: the whole request's ranking
// stands. A request of one step ranks exactly as before.

// maxSteps bounds the steps ranked one by one.
const maxSteps = 8

// minStepWords is the fewest words of a step; a shorter piece ("Then",
// "Lastly, please") joins the step before it.
const minStepWords = 3

// stepConnectives start a new step inside a sentence: the clause
// connectives of sequence. Matched as whole words, lower-cased, after a
// comma or at the start of a clause.
var stepConnectives = []string{"and then", "then", "after that", "afterwards", "and also", "also", "additionally", "finally", "lastly", "next"}

// Steps splits a request into its steps: its sentences (at . ! ? ; and
// line breaks), and inside a sentence at a comma followed by a connective
// of sequence ("then", "after that", "and also", ...). Pieces of fewer
// than three words join the step before them. At most maxSteps steps are
// returned; the rest of the request is part of the last.
func Steps(q string) []string {
	var pieces []string
	for _, s := range strings.FieldsFunc(q, func(r rune) bool {
		return r == '.' || r == '!' || r == '?' || r == ';' || r == '\n' || r == '。'
	}) {
		pieces = append(pieces, splitClauses(s)...)
	}
	var steps []string
	for _, p := range pieces {
		p = strings.TrimFunc(p, func(r rune) bool { return unicode.IsSpace(r) || r == ',' })
		if p == "" {
			continue
		}
		if len(steps) > 0 && (len(strings.Fields(p)) < minStepWords || len(steps) == maxSteps) {
			steps[len(steps)-1] += ". " + p
			continue
		}
		steps = append(steps, p)
	}
	// A first piece that was too short stands alone: join it to the next.
	if len(steps) > 1 && len(strings.Fields(steps[0])) < minStepWords {
		steps[1] = steps[0] + ". " + steps[1]
		steps = steps[1:]
	}
	return steps
}

// splitClauses splits a sentence before each ", <connective> " (the
// comma may be missing before "and then" and "after that").
func splitClauses(s string) []string {
	lower := strings.ToLower(s)
	var cuts []int
	for i := 0; i < len(lower); i++ {
		if i > 0 && lower[i-1] != ' ' {
			continue
		}
		for _, c := range stepConnectives {
			if !strings.HasPrefix(lower[i:], c) || i+len(c) < len(lower) && !isSpaceOrComma(lower[i+len(c)]) {
				continue
			}
			before := strings.TrimRight(lower[:i], " ")
			if strings.HasSuffix(before, ",") || strings.Contains(c, " ") && before != "" {
				cuts = append(cuts, i)
			}
			break
		}
	}
	var out []string
	start := 0
	for _, c := range cuts {
		out = append(out, s[start:c])
		start = c
	}
	return append(out, s[start:])
}

func isSpaceOrComma(b byte) bool { return b == ' ' || b == ',' }

// composeSteps ranks each step as the whole request was ranked (rank),
// and puts the best StepDepth tools of every step first, in turns, then
// whole's; each result from a step's list carries its 1-based step.
func (e *Engine) composeSteps(ctx context.Context, pl plan, steps []string, whole []Result, rank func(context.Context, plan) ([]Result, error)) ([]Result, error) {
	lists := make([][]Result, len(steps))
	for i, s := range steps {
		sp := pl
		sp.q = s
		sp.depth = max(pl.p.StepDepth, pl.limit)
		rs, err := rank(ctx, sp)
		if err != nil {
			return nil, err
		}
		lists[i] = rs
	}
	if pl.p.StepWeight > 0 {
		return fuseSteps(pl.p, whole, lists), nil
	}
	out := make([]Result, 0, len(whole)+len(steps)*pl.p.StepDepth)
	taken := map[string]bool{}
	for r := 0; r < pl.p.StepDepth; r++ {
		for i, l := range lists {
			if r >= len(l) || taken[l[r].Tool.QualifiedName] {
				continue
			}
			res := l[r]
			res.Step = i + 1
			taken[res.Tool.QualifiedName] = true
			out = append(out, res)
		}
	}
	for _, res := range whole {
		if !taken[res.Tool.QualifiedName] {
			taken[res.Tool.QualifiedName] = true
			out = append(out, res)
		}
	}
	return out, nil
}

// fuseSteps fuses the whole request's ranking (weight 1) and the steps'
// (weight StepWeight each) by Reciprocal Rank Fusion; a tool's step is the
// one whose ranking gave it most.
func fuseSteps(p Params, whole []Result, lists [][]Result) []Result {
	all := append([][]Result{whole}, lists...)
	ids := func(li int) []string {
		out := make([]string, len(all[li]))
		for i, r := range all[li] {
			out[i] = r.Tool.QualifiedName
		}
		return out
	}
	byID := map[string]Result{}
	for _, l := range all {
		for _, r := range l {
			if _, ok := byID[r.Tool.QualifiedName]; !ok {
				byID[r.Tool.QualifiedName] = r
			}
		}
	}
	fused := fuseLists(len(all), ids, func(li, r int) float64 {
		w := p.StepWeight
		if li == 0 {
			w = 1
		}
		return w / (p.RRFK + float64(r+1))
	})
	out := make([]Result, 0, len(fused))
	for _, f := range fused {
		res := byID[f.ID]
		res.Score, res.Step = f.Score, 0
		best := 0
		for li := 1; li < len(f.Ranks); li++ {
			if f.Ranks[li] > 0 && (best == 0 || f.Ranks[li] < best) {
				best, res.Step = f.Ranks[li], li
			}
		}
		out = append(out, res)
	}
	return out
}

// labelSteps keeps the whole request's ranking and gives each of its
// first pl.limit results the step it fits best: the step whose text the
// tool's keyword coverage plus semantic similarity is highest for (by the
// lists mode ranks with). Only those tools are scored, against each step:
// no step is ranked over the catalog. A tool that matches no step keeps
// step 0.
func (e *Engine) labelSteps(ctx context.Context, pl plan, steps []string, whole []Result, mode Mode) ([]Result, error) {
	n := min(len(whole), pl.limit)
	if n == 0 {
		return whole, nil
	}
	ids := make([]string, n)
	for i, r := range whole[:n] {
		ids[i] = r.Tool.QualifiedName
	}
	// The steps are scored at once, each into its own row (a 4-step
	// request spent 2 ms here one step after the other at 10k tools), and
	// read in step order, so that a tie still goes to the earlier step.
	fits := make([][]float64, len(steps))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for si, step := range steps {
		g.Go(func() error {
			fit, err := e.stepFit(gctx, pl, step, ids, mode)
			fits[si] = fit
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	best := make([]float64, n)
	for si, fit := range fits {
		for i, f := range fit {
			if f > best[i] {
				best[i] = f
				whole[i].Step = si + 1
			}
		}
	}
	return whole, nil
}

// stepFit returns how well each tool of ids fits one step: its keyword
// coverage plus its semantic similarity, by the lists mode ranks with.
func (e *Engine) stepFit(ctx context.Context, pl plan, step string, ids []string, mode Mode) ([]float64, error) {
	fit := make([]float64, len(ids))
	if mode != Semantic {
		hits, err := pl.ix.kw.Search(ctx, keyword.Query{Text: step, IDs: ids, Size: len(ids), Weights: pl.p.Fields, Scoring: pl.p.scoring()})
		if err != nil && !errors.Is(err, keyword.ErrEmptyQuery) {
			return nil, err
		}
		cov := make(map[string]float64, len(hits))
		for _, h := range hits {
			cov[h.ID] = h.Coverage
		}
		for i, id := range ids {
			fit[i] = cov[id]
		}
	}
	if mode != Keyword && pl.emb != nil {
		v, err := e.embedQuery(ctx, pl.ix, pl.emb, step)
		if err != nil {
			return nil, semanticError{err}
		}
		sims, err := pl.ix.vs.Similarities(ctx, collectionOf(pl.emb, len(v)), v, ids)
		if err != nil {
			return nil, semanticError{err}
		}
		for i, s := range sims {
			fit[i] += float64(s)
		}
	}
	return fit, nil
}
