package eval

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/search"
)

// A fusion fit learns search's FusionModel from labelled queries: each
// query is searched once (CaptureFusion), then ranked under many models
// from what its two lists said (search.FusionInputs), and the model
// coordinate ascent finds best is kept (FitFusion). Coordinate ascent on
// the metric itself is the linear learning-to-rank method of Metzler and
// Croft (2007): it needs no gradient of nDCG and, started from the convex
// fusion, can only do as well or better on the sets it sees.

// FusionSet is one dataset's captured queries.
type FusionSet struct {
	Name    string
	Samples []FusionSample
	// Floor is the nDCG@10 the set must keep (FitOptions); 0: none.
	Floor float64
	// Gate marks a regression gate: its shortfall below Floor counts
	// against a fit, its nDCG@10 does not count in the mean.
	Gate bool
}

// FusionSample is one query: its fusion inputs and the gain of each
// relevant tool by qualified name.
type FusionSample struct {
	In   *search.FusionInputs
	Gain map[string]float64
	idcg float64
}

// OpenEngine indexes ds's catalog with emb (in the store stores opens,
// or in memory when it is nil) and returns its engine and the function
// that closes it.
func OpenEngine(ctx context.Context, ds *Dataset, emb embed.Embedder, stores StoreOpener, log *slog.Logger, progress func(done, total int)) (*search.Engine, func(), error) {
	live, _, err := search.OpenNamed(ctx, stores, storeKey(ds, emb), search.LiveOptions{Embedder: emb, CacheSize: -1, Logger: log, Progress: progress}, ds.Catalog.Specs())
	if err != nil {
		return nil, nil, fmt.Errorf("dataset %s: %w", ds.Name, err)
	}
	return live.Engine(), func() { live.Close() }, nil
}

// CaptureFusion searches every query of ds once on eng and keeps what the
// learned fusion reads of it.
func CaptureFusion(ctx context.Context, eng *search.Engine, ds *Dataset, progress func(done, total int)) (*FusionSet, error) {
	set := &FusionSet{Name: ds.Name}
	for i := range ds.Queries {
		q := &ds.Queries[i]
		in, err := eng.FusionInputs(ctx, search.Request{Query: q.Query, Limit: 10})
		if err != nil {
			return nil, fmt.Errorf("dataset %s, query %s: %w", ds.Name, q.ID, err)
		}
		s := FusionSample{In: in, Gain: map[string]float64{}}
		var gains []float64
		for _, key := range q.Relevant {
			gains = append(gains, q.Gain(key))
			if t := ds.Catalog.ToolByKey(key); t != nil {
				s.Gain[t.QualifiedName] = q.Gain(key)
			}
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(gains)))
		for r := 0; r < 10 && r < len(gains); r++ {
			s.idcg += gains[r] / math.Log2(float64(r+2))
		}
		set.Samples = append(set.Samples, s)
		if progress != nil && (i%100 == 99 || i == len(ds.Queries)-1) {
			progress(i+1, len(ds.Queries))
		}
	}
	return set, nil
}

// NDCG returns each sample's nDCG@10 under m.
func (s *FusionSet) NDCG(m *search.FusionModel) []float64 {
	out := make([]float64, len(s.Samples))
	var buf []float64
	for i := range s.Samples {
		out[i], buf = s.Samples[i].ndcg(m, buf)
	}
	return out
}

// ndcg ranks the sample under m (the ten best, ties in order of first
// appearance, as search does) and scores it as NDCGAt does.
func (s *FusionSample) ndcg(m *search.FusionModel, buf []float64) (float64, []float64) {
	if s.idcg == 0 {
		return 0, buf
	}
	buf = s.In.Scores(m, buf)
	ids := s.In.IDs()
	var top [10]int
	n := 0
	for i, v := range buf {
		// Insert i into the top list if it beats its last; equal scores
		// keep the earlier candidate first.
		if n == 10 && v <= buf[top[9]] {
			continue
		}
		j := min(n, 9)
		for j > 0 && v > buf[top[j-1]] {
			top[j] = top[j-1]
			j--
		}
		top[j] = i
		if n < 10 {
			n++
		}
	}
	dcg := 0.0
	for r := 0; r < n; r++ {
		dcg += s.Gain[ids[top[r]]] / math.Log2(float64(r+2))
	}
	return dcg / s.idcg, buf
}

// FitOptions bound a fusion fit.
type FitOptions struct {
	// Rounds is the most passes over the parameters (20 when zero).
	Rounds int
	// Frozen names parameters kept at their start ("weights.similarity",
	// "keyword.words", ...).
	Frozen map[string]bool
	// Penalty weighs, in the objective, the mean shortfall of the sets
	// below their Floor (2 when zero).
	Penalty float64
	// Worst weighs, in the objective, the largest shortfall of any one set
	// below its Floor (0: none). The mean penalty lets a fit trade one
	// set's loss for gains spread over the others (a shortfall of 0.004
	// on one set of ten costs 0.0008 at Penalty 2); a large Worst makes
	// each floor nearly a constraint, so that the worst case counts as
	// well as the mean.
	Worst float64
	// NonNegative keeps every evidence weight at 0 or more: more evidence
	// for a tool never ranks it lower (a monotonicity prior; without it
	// a fit made the domain's rank count against a tool).
	NonNegative bool
	Log         func(format string, args ...any)
}

// FusionObjective is what a fit maximises: the mean over the sets (gates
// aside) of their nDCG@10, less Penalty times their shortfalls below
// their floors (gates included) over the number of sets counted.
// It returns the objective and each set's nDCG@10.
func FusionObjective(sets []*FusionSet, m *search.FusionModel, penalty float64) (float64, []float64) {
	return fusionObjective(sets, m, penalty, 0)
}

// fusionObjective is FusionObjective less worst times the largest
// shortfall of one set below its floor.
func fusionObjective(sets []*FusionSet, m *search.FusionModel, penalty, worst float64) (float64, []float64) {
	means := make([]float64, len(sets))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, s := range sets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			means[i] = mean(s.NDCG(m))
		}()
	}
	wg.Wait()
	obj, short, most, n := 0.0, 0.0, 0.0, 0.0
	for i, s := range sets {
		if !s.Gate {
			obj += means[i]
			n++
		}
		if s.Floor > 0 {
			short += max(0, s.Floor-means[i])
			most = max(most, s.Floor-means[i])
		}
	}
	n = max(n, 1)
	return obj/n - penalty*short/n - worst*most, means
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// fusionParam is one parameter of a FusionModel that a fit moves.
type fusionParam struct {
	name string
	v    *float64
	step float64
}

// fusionParams lists m's parameters by name.
func fusionParams(m *search.FusionModel) []fusionParam {
	var ps []fusionParam
	for i, n := range search.EvidenceNames {
		ps = append(ps, fusionParam{"weights." + n, &m.Weights[i], 0.25})
	}
	if m.KeywordPower == 0 {
		m.KeywordPower = 1
	}
	ps = append(ps, fusionParam{"keyword_power", &m.KeywordPower, 0.5})
	for i, n := range search.ShapeNames {
		ps = append(ps, fusionParam{"keyword." + n, &m.Keyword[i], 0.5})
		ps = append(ps, fusionParam{"semantic." + n, &m.Semantic[i], 0.5})
	}
	return ps
}

// CenterShapes sets m.Center to the mean request shape over the sets,
// each set counting alike, so that the adaptation terms start at 0.
func CenterShapes(m *search.FusionModel, sets []*FusionSet) {
	var c [len(search.ShapeNames)]float64
	for _, s := range sets {
		var sum [len(search.ShapeNames)]float64
		for _, q := range s.Samples {
			for i, v := range q.In.Shape() {
				sum[i] += v
			}
		}
		for i := range sum {
			c[i] += sum[i] / float64(max(1, len(s.Samples))) / float64(len(sets))
		}
	}
	for i := range c {
		m.Center[i] = round4(c[i])
	}
}

// FitFusion improves start by coordinate ascent on FusionObjective (less
// opts.Worst times the largest shortfall below a floor): each
// round tries, for every parameter not frozen, steps of ±1, ±½ and ±¼ of
// its step size and keeps the best move; a round without a move halves
// the steps. It returns the best model found.
func FitFusion(sets []*FusionSet, start search.FusionModel, opts FitOptions) search.FusionModel {
	rounds := opts.Rounds
	if rounds <= 0 {
		rounds = 20
	}
	penalty := opts.Penalty
	if penalty == 0 {
		penalty = 2
	}
	logf := opts.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	m := start
	if opts.NonNegative {
		for i := range m.Weights {
			m.Weights[i] = max(0, m.Weights[i])
		}
	}
	best, _ := fusionObjective(sets, &m, penalty, opts.Worst)
	logf("start: objective %.5f", best)
	scale := 1.0
	for round := 0; round < rounds && scale > 1.0/64; round++ {
		moved := false
		for _, p := range fusionParams(&m) {
			if opts.Frozen[p.name] {
				continue
			}
			orig := *p.v
			bestV := orig
			for _, f := range []float64{1, -1, 0.5, -0.5, 0.25, -0.25} {
				*p.v = orig + f*p.step*scale
				if opts.NonNegative && strings.HasPrefix(p.name, "weights.") && *p.v < 0 {
					continue
				}
				if obj, _ := fusionObjective(sets, &m, penalty, opts.Worst); obj > best+1e-6 {
					best, bestV = obj, *p.v
				}
			}
			*p.v = bestV
			if bestV != orig {
				moved = true
				logf("round %d: %s %.4f -> %.4f, objective %.5f", round+1, p.name, orig, bestV, best)
			}
		}
		if !moved {
			scale /= 2
		}
	}
	for _, p := range fusionParams(&m) {
		*p.v = round4(*p.v)
	}
	return m
}

// FusionOracle returns, per set, the mean over queries of the best
// nDCG@10 that any of models reaches on each query: how much choosing
// among them per request could gain at most.
func FusionOracle(sets []*FusionSet, models []search.FusionModel) []float64 {
	out := make([]float64, len(sets))
	for i, s := range sets {
		best := make([]float64, len(s.Samples))
		for j := range models {
			for k, v := range s.NDCG(&models[j]) {
				best[k] = max(best[k], v)
			}
		}
		out[i] = mean(best)
	}
	return out
}
