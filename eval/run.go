package eval

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/search"
)

// RunSpec is one strategy to measure.
type RunSpec struct {
	// Label names the run in reports; derived from the mode when empty.
	Label string      `json:"label,omitempty"`
	Mode  search.Mode `json:"mode"`
	// Embedder is a key of Options.Embedders ("" is Options.Embedder).
	Embedder string `json:"embedder,omitempty"`
	// Params override the defaults; zero fields keep them.
	Params search.Params `json:"params,omitempty"`
}

// ModeRuns returns one default run per mode.
func ModeRuns(modes []search.Mode) []RunSpec {
	runs := make([]RunSpec, len(modes))
	for i, m := range modes {
		runs[i] = RunSpec{Mode: m}
	}
	return runs
}

// Options configures Evaluate.
type Options struct {
	Runs []RunSpec
	// Ks are the cut-offs of recall@k (1, 5, 10 when empty).
	Ks []int
	// Embedder is the default embedder; Embedders holds others by key.
	Embedder  embed.Embedder
	Embedders map[string]embed.Embedder
	// Stores opens the store that caches the indexes of a dataset's
	// catalog with an embedder (its key names both); nil keeps them in
	// memory. eval never opens a data dir itself: the program's start-up
	// does (cmd/toolscout's openStore), as for every other command.
	Stores StoreOpener
	// Confidence measures each run's confidence (confidence.go): every
	// query is ranked a second time, without its relevant tools.
	Confidence bool
	// Progress reports indexing and querying on a label.
	Progress func(label string, done, total int)
	Logger   *slog.Logger
	// FeedbackSplit, above 0, replays that share of each dataset's
	// queries as runs of their relevant tools and scores every run on
	// the rest, each beside itself with the feedback channel
	// ("<run>+feedback"; feedback.go). FeedbackParams shape the channel.
	FeedbackSplit  float64
	FeedbackParams search.FeedbackParams
}

// Report is the outcome of Evaluate, in the JSON shape docs/eval.md
// documents.
type Report struct {
	Datasets []*DatasetReport `json:"datasets"`
}

// DatasetReport holds the runs on one dataset (or split).
type DatasetReport struct {
	Name    string       `json:"name"`
	Tools   int          `json:"tools"`
	Queries int          `json:"queries"`
	Runs    []*RunReport `json:"runs"`
	// Comparisons against the baseline run, when Compare filled them.
	Comparisons []Comparison `json:"comparisons,omitempty"`

	queries []Query
	split   bool // a split of a dataset reported above it
}

// RunReport is one run's averaged metrics and latency.
type RunReport struct {
	Label     string             `json:"label,omitempty"`
	Mode      search.Mode        `json:"mode"`
	Embedder  string             `json:"embedder"`
	Params    map[string]any     `json:"params"`
	Metrics   map[string]float64 `json:"metrics"`
	LatencyMs map[string]float64 `json:"latency_ms"`
	// Fallbacks counts queries answered by keyword because semantic
	// ranking failed.
	Fallbacks int `json:"fallbacks,omitempty"`
	// Categories breaks nDCG@10 and MRR down by the queries' category, when
	// the dataset labels them.
	Categories map[string]CategoryMetrics `json:"categories,omitempty"`
	// Confidence, when measured (Options.Confidence) and the run's answers
	// carry one.
	Confidence *ConfidenceReport `json:"confidence,omitempty"`

	perQuery []queryResult
}

// CategoryMetrics are a run's averages over the queries of one category.
type CategoryMetrics struct {
	Queries int     `json:"queries"`
	NDCG10  float64 `json:"ndcg@10"`
	MRR     float64 `json:"mrr"`
}

type queryResult struct {
	metrics map[string]float64
	ranked  []string  // domain/tool, best first
	scores  []float64 // the run's score of each ranked tool
	latency float64   // ms
	judged  *judged   // with Options.Confidence
}

// MetricNames returns the metric keys for the cut-offs ks, in report order.
func MetricNames(ks []int) []string {
	var out []string
	for _, k := range ks {
		out = append(out, "recall@"+strconv.Itoa(k))
	}
	return append(out, "mrr", "ndcg@10")
}

// Evaluate indexes each dataset's catalog once per embedder and runs every
// query of every run through search.Engine.Search, as the server does.
func Evaluate(ctx context.Context, datasets []*Dataset, opts Options) (*Report, error) {
	ks := opts.Ks
	if len(ks) == 0 {
		ks = []int{1, 5, 10}
	}
	limit := 10
	for _, k := range ks {
		if k < 1 || k > search.MaxLimit {
			return nil, fmt.Errorf("k %d is out of range: use 1 to %d", k, search.MaxLimit)
		}
		limit = max(limit, k)
	}
	if len(opts.Runs) == 0 {
		return nil, fmt.Errorf("no runs to evaluate")
	}
	for _, r := range opts.Runs {
		if _, err := search.ParseMode(string(r.Mode)); (err != nil || r.Mode == "") && r.Mode != BM25 {
			return nil, fmt.Errorf("run %q: unknown mode %q: use bm25, keyword, semantic or hybrid", r.Label, r.Mode)
		}
		if r.Embedder != "" && opts.Embedders[r.Embedder] == nil {
			return nil, fmt.Errorf("run %q: unknown embedder %q", r.Label, r.Embedder)
		}
	}
	if err := checkFeedbackSplit(opts.FeedbackSplit); err != nil {
		return nil, err
	}
	rep := &Report{}
	for _, ds := range datasets {
		ds, replayed := splitForFeedback(ds, opts.FeedbackSplit)
		engines := map[string]*search.Engine{}
		var closers []*search.Live
		engineFor := func(key string) (*search.Engine, error) {
			if e, ok := engines[key]; ok {
				return e, nil
			}
			emb := opts.Embedder
			if key != "" {
				emb = opts.Embedders[key]
			}
			label := "index " + ds.Name
			live, _, err := search.OpenNamed(ctx, opts.Stores, storeKey(ds, emb), search.LiveOptions{
				Embedder: emb, CacheSize: -1, Logger: opts.Logger,
				Progress: func(done, total int) {
					if opts.Progress != nil {
						opts.Progress(label, done, total)
					}
				},
			}, ds.Catalog.Specs())
			if err != nil {
				return nil, fmt.Errorf("dataset %s: %w", ds.Name, err)
			}
			closers = append(closers, live)
			engines[key] = live.Engine()
			return live.Engine(), nil
		}
		results := make([]*RunReport, len(opts.Runs))
		var yardstick *plainBM25
		for ri, spec := range opts.Runs {
			if spec.Mode == BM25 {
				if yardstick == nil {
					yardstick = newPlainBM25(ds.Catalog)
				}
				results[ri] = runBM25(yardstick, ds, spec, ks, limit)
				continue
			}
			eng, err := engineFor(spec.Embedder)
			if err != nil {
				closeAll(closers)
				return nil, err
			}
			rr, err := runOne(ctx, eng, ds, spec, ks, limit, opts.Confidence, opts.Progress)
			if err != nil {
				closeAll(closers)
				return nil, err
			}
			results[ri] = rr
		}
		if opts.FeedbackSplit > 0 {
			fr, err := feedbackRuns(ctx, engineFor, ds, replayed, opts.Runs, opts, ks, limit)
			if err != nil {
				closeAll(closers)
				return nil, err
			}
			results = append(results, fr...)
		}
		closeAll(closers)
		// The whole dataset, then each split.
		parts := []*Dataset{ds}
		if splits := ds.Splits(); len(splits) > 1 {
			parts = append(parts, splits...)
		}
		for _, part := range parts {
			dr := subset(part, ds, results, ks)
			dr.split = part != ds
			rep.Datasets = append(rep.Datasets, dr)
		}
	}
	return rep, nil
}

func closeAll(lives []*search.Live) {
	for _, l := range lives {
		l.Close()
	}
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// runBM25 measures the plain BM25 yardstick on ds.
func runBM25(p *plainBM25, ds *Dataset, spec RunSpec, ks []int, limit int) *RunReport {
	rr := &RunReport{Label: spec.Label, Mode: BM25, Embedder: "none", Params: map[string]any{"k1": 1.2, "b": 0.75}, perQuery: make([]queryResult, len(ds.Queries))}
	for i := range ds.Queries {
		q := &ds.Queries[i]
		start := time.Now()
		ranked, scores := p.rankScored(q.Query, limit)
		elapsed := float64(time.Since(start).Microseconds()) / 1000
		rr.perQuery[i] = queryResult{metrics: queryMetrics(q, ranked, ks), ranked: ranked, scores: scores, latency: elapsed}
	}
	return rr
}

// queryMetrics scores one ranked list.
func queryMetrics(q *Query, ranked []string, ks []int) map[string]float64 {
	m := map[string]float64{}
	for _, k := range ks {
		m["recall@"+strconv.Itoa(k)] = RecallAt(q, ranked, k)
	}
	m["mrr"] = ReciprocalRank(q, ranked)
	m["ndcg@10"] = NDCGAt(q, ranked, 10)
	return m
}

func runOne(ctx context.Context, eng searcher, ds *Dataset, spec RunSpec, ks []int, limit int, confidence bool, progress func(string, int, int)) (*RunReport, error) {
	params := spec.Params
	label := spec.Label
	if label == "" {
		label = string(spec.Mode)
	}
	rr := &RunReport{Label: spec.Label, Mode: spec.Mode, Embedder: "none", perQuery: make([]queryResult, len(ds.Queries))}
	for i := range ds.Queries {
		q := &ds.Queries[i]
		start := time.Now()
		resp, err := eng.Search(ctx, search.Request{Query: q.Query, Mode: spec.Mode, Limit: limit, Params: &params})
		elapsed := float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			return nil, fmt.Errorf("run %s, query %s (%q): %w", label, q.ID, q.Query, err)
		}
		if resp.Mode != spec.Mode {
			rr.Fallbacks++
		}
		if resp.Embedder != "none" {
			rr.Embedder = resp.Embedder
		}
		ranked := make([]string, len(resp.Results))
		scores := make([]float64, len(resp.Results))
		for j, r := range resp.Results {
			ranked[j], scores[j] = r.Tool.Domain+"/"+r.Tool.Name, r.Score
		}
		rr.perQuery[i] = queryResult{metrics: queryMetrics(q, ranked, ks), ranked: ranked, scores: scores, latency: elapsed}
		if confidence && resp.Confidence != nil {
			without, err := eng.Search(ctx, search.Request{Query: q.Query, Mode: spec.Mode, Limit: limit, Params: &params, Exclude: qualifiedNames(ds, q.Relevant)})
			if err != nil {
				return nil, fmt.Errorf("run %s, query %s without its tools: %w", label, q.ID, err)
			}
			if without.Confidence != nil {
				rr.perQuery[i].judged = &judged{present: *resp.Confidence, absent: *without.Confidence,
					ranks: judgeRanks(q, resp.Results), absentRanks: judgeRanks(q, without.Results)}
			}
		}
		if progress != nil && (i%50 == 49 || i == len(ds.Queries)-1) {
			progress("query "+ds.Name+" "+label, i+1, len(ds.Queries))
		}
	}
	rr.Params = paramsMap(spec.Mode, eng.Params(), spec.Params)
	return rr, nil
}

// qualifiedNames returns the qualified names of the tools of keys
// ("domain/tool") in ds's catalog.
func qualifiedNames(ds *Dataset, keys []string) []string {
	var out []string
	for _, k := range keys {
		if t := ds.Catalog.ToolByKey(k); t != nil {
			out = append(out, t.QualifiedName)
		}
	}
	return out
}

// paramsMap lists the parameters that shape a mode's ranking.
func paramsMap(mode search.Mode, engine search.Params, override search.Params) map[string]any {
	p := engine
	if override.Fusion != "" {
		p.Fusion = override.Fusion
	}
	if override.RRFK > 0 {
		p.RRFK = override.RRFK
	}
	if override.KeywordWeight != 0 || override.SemanticWeight != 0 {
		p.KeywordWeight, p.SemanticWeight = override.KeywordWeight, override.SemanticWeight
	}
	if override.ExactBoost != 0 {
		p.ExactBoost = max(override.ExactBoost, 0)
	}
	if override.DomainBoost != 0 {
		p.DomainBoost = max(override.DomainBoost, 0)
	}
	if override.DomainWeight != 0 {
		p.DomainWeight = max(override.DomainWeight, 0)
	}
	if override.Fuzzy != 0 {
		p.Fuzzy = max(override.Fuzzy, 0)
	}
	if override.Candidates > 0 {
		p.Candidates = override.Candidates
	}
	if override.KeywordScoring != "" {
		p.KeywordScoring = override.KeywordScoring
	}
	if override.KeywordFullCoverage != 0 {
		p.KeywordFullCoverage = max(override.KeywordFullCoverage, 0)
	}
	if override.StepWeight != 0 {
		p.StepWeight = override.StepWeight
	}
	if override.StepDepth != 0 {
		p.StepDepth = override.StepDepth
	}
	if override.SentenceShare != 0 {
		p.SentenceShare = max(override.SentenceShare, 0)
	}
	if override.ScaledSentences > 0 {
		p.ScaledSentences = override.ScaledSentences
	}
	out := map[string]any{}
	switch mode {
	case search.Hybrid:
		out["fusion"] = p.Fusion
		out["rrf_k"] = p.RRFK // RRF's k, and the domain ranking's under either fusion
		out["keyword_weight"] = p.KeywordWeight
		out["semantic_weight"] = p.SemanticWeight
		out["exact_boost"] = p.ExactBoost
		out["domain_boost"] = p.DomainBoost
		out["domain_weight"] = p.DomainWeight
		out["candidates"] = p.Candidates
		out["keyword_full_coverage"] = p.KeywordFullCoverage
	case search.Keyword:
		out["fuzzy"] = p.Fuzzy
	}
	out["step_depth"] = p.StepDepth
	if mode != search.Keyword {
		out["sentence_share"] = p.SentenceShare
		out["scaled_sentences"] = p.ScaledSentences
	}
	if p.StepWeight > 0 {
		out["step_weight"] = p.StepWeight
	}
	if mode != search.Semantic && p.KeywordScoring != "" {
		out["keyword_scoring"] = p.KeywordScoring
	}
	if mode != search.Semantic && len(override.Fields) > 0 {
		out["fields"] = override.Fields
	}
	return out
}

// subset builds the report of part (a split of ds, or ds itself) from the
// per-query results of the runs on ds.
func subset(part, ds *Dataset, runs []*RunReport, ks []int) *DatasetReport {
	pos := map[string]int{}
	for i, q := range ds.Queries {
		pos[q.ID] = i
	}
	dr := &DatasetReport{Name: part.Name, Tools: ds.Catalog.Len(), Queries: len(part.Queries), queries: part.Queries}
	for _, full := range runs {
		rr := &RunReport{Label: full.Label, Mode: full.Mode, Embedder: full.Embedder, Params: full.Params, Metrics: map[string]float64{}}
		var lat []float64
		var js []*judged
		cats := map[string]*CategoryMetrics{}
		for _, q := range part.Queries {
			r := full.perQuery[pos[q.ID]]
			rr.perQuery = append(rr.perQuery, r)
			js = append(js, r.judged)
			lat = append(lat, r.latency)
			for k, v := range r.metrics {
				rr.Metrics[k] += v
			}
			if q.Category != "" {
				c := cats[q.Category]
				if c == nil {
					c = &CategoryMetrics{}
					cats[q.Category] = c
				}
				c.Queries++
				c.NDCG10 += r.metrics["ndcg@10"]
				c.MRR += r.metrics["mrr"]
			}
		}
		if len(cats) > 1 {
			rr.Categories = map[string]CategoryMetrics{}
			for name, c := range cats {
				rr.Categories[name] = CategoryMetrics{Queries: c.Queries, NDCG10: round4(c.NDCG10 / float64(c.Queries)), MRR: round4(c.MRR / float64(c.Queries))}
			}
		}
		for k := range rr.Metrics {
			rr.Metrics[k] = round4(rr.Metrics[k] / float64(len(part.Queries)))
		}
		rr.LatencyMs = map[string]float64{"p50": round4(percentile(lat, 50)), "p95": round4(percentile(lat, 95))}
		rr.Confidence = confidenceReport(js)
		if part == ds {
			rr.Fallbacks = full.Fallbacks
		}
		dr.Runs = append(dr.Runs, rr)
	}
	return dr
}

func round4(x float64) float64 { return math.Round(x*10000) / 10000 }

// RunName is the label a report shows for a run.
func (r *RunReport) RunName() string {
	if r.Label != "" {
		return r.Label
	}
	return string(r.Mode)
}

// Miss is one of a run's worst queries.
type Miss struct {
	ID       string   `json:"id"`
	Query    string   `json:"query"`
	NDCG     float64  `json:"ndcg@10"`
	Relevant []string `json:"relevant"`
	// RelevantRanks holds each relevant tool's 1-based rank (0: not in the
	// results).
	RelevantRanks []int `json:"relevant_ranks"`
	// Above lists what ranked above the first relevant tool (at most 3).
	Above []string `json:"above"`
}

// Misses returns the n queries of a run with the lowest nDCG@10.
func (d *DatasetReport) Misses(run, n int) []Miss {
	rr := d.Runs[run]
	idx := make([]int, len(rr.perQuery))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ma, mb := rr.perQuery[idx[a]].metrics, rr.perQuery[idx[b]].metrics
		if ma["ndcg@10"] != mb["ndcg@10"] {
			return ma["ndcg@10"] < mb["ndcg@10"]
		}
		return ma["mrr"] < mb["mrr"]
	})
	var out []Miss
	for _, i := range idx[:min(n, len(idx))] {
		q := d.queries[i]
		r := rr.perQuery[i]
		m := Miss{ID: q.ID, Query: q.Query, NDCG: round4(r.metrics["ndcg@10"]), Relevant: q.Relevant}
		first := len(r.ranked)
		for _, rel := range q.Relevant {
			rank := 0
			for j, x := range r.ranked {
				if x == rel {
					rank = j + 1
					first = min(first, j)
					break
				}
			}
			m.RelevantRanks = append(m.RelevantRanks, rank)
		}
		m.Above = append([]string{}, r.ranked[:min(first, 3)]...)
		out = append(out, m)
	}
	return out
}

// StoreOpener opens the store named key (a dataset's catalog hash and an
// embedder: the same key, the same indexes) in the program's data dir.
// eval reaches the store through search only.
type StoreOpener = search.StoreOpener

// storeKey names the store of ds's catalog indexed with emb.
func storeKey(ds *Dataset, emb embed.Embedder) string {
	name := "none"
	if emb != nil {
		name = emb.Info().Provider + "-" + emb.Info().Model
	}
	return fmt.Sprintf("eval-%s-%s", ds.Catalog.Hash(), sanitize(name))
}
