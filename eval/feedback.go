package eval

import (
	"context"
	"fmt"
	"math/rand"
	"time"

	"github.com/toolscout/toolscout/search"
)

// The feedback channel measured (Options.FeedbackSplit): the first share
// of a dataset's queries, in a seeded shuffle, are replayed as runs of
// their relevant tools (each query a caller of its own, as each agent
// session is), and every run is scored on the rest: the plain runs and,
// beside each, the same run with the channel, named "<run>+feedback".

// FeedbackSeed seeds the shuffle that picks the replayed queries.
const FeedbackSeed = 33

// FeedbackSuffix ends the name of a run with the feedback channel.
const FeedbackSuffix = "+feedback"

// searcher answers a request: an engine, or an engine with the feedback
// channel.
type searcher interface {
	Search(ctx context.Context, req search.Request) (*search.Response, error)
	Params() search.Params
}

// withFeedback is an engine whose answers go through the feedback
// channel.
type withFeedback struct {
	*search.Engine
	fb *search.Feedback
}

func (w withFeedback) Search(ctx context.Context, req search.Request) (*search.Response, error) {
	return w.fb.Search(ctx, w.Engine, req)
}

// splitForFeedback returns ds with only the queries scored (a copy) and
// the queries replayed as runs, share of them picked by a seeded
// shuffle. share 0 returns ds whole and nothing to replay.
func splitForFeedback(ds *Dataset, share float64) (scored *Dataset, replayed []Query) {
	if share <= 0 {
		return ds, nil
	}
	qs := append([]Query(nil), ds.Queries...)
	r := rand.New(rand.NewSource(FeedbackSeed))
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	n := int(share * float64(len(qs)))
	rest := qs[n:]
	// Scored in the dataset's order, so that reports read as they do
	// without the split.
	keep := make(map[string]bool, len(rest))
	for _, q := range rest {
		keep[q.ID] = true
	}
	out := &Dataset{Name: ds.Name, Catalog: ds.Catalog}
	for _, q := range ds.Queries {
		if keep[q.ID] {
			out.Queries = append(out.Queries, q)
		}
	}
	return out, qs[:n]
}

// FeedbackEvents returns the events of queries run: each relevant tool
// of each query, run by a caller of its own at now.
func FeedbackEvents(ds *Dataset, queries []Query, now time.Time) []search.FeedbackEvent {
	var out []search.FeedbackEvent
	for _, q := range queries {
		for _, key := range q.Relevant {
			t := ds.Catalog.ToolByKey(key)
			if t == nil {
				continue
			}
			out = append(out, search.FeedbackEvent{Request: q.Query, Tool: t.QualifiedName, Caller: "eval:" + q.ID, Time: now})
		}
	}
	return out
}

// feedbackRuns runs each run of specs but the bm25 yardstick again with
// the feedback channel of the replayed queries' events, on ds's queries.
func feedbackRuns(ctx context.Context, engineFor func(string) (*search.Engine, error), ds *Dataset, replayed []Query, specs []RunSpec, opts Options, ks []int, limit int) ([]*RunReport, error) {
	now := time.Now()
	events := FeedbackEvents(ds, replayed, now)
	var out []*RunReport
	for _, spec := range specs {
		if spec.Mode == BM25 {
			continue
		}
		eng, err := engineFor(spec.Embedder)
		if err != nil {
			return nil, err
		}
		fb := search.NewFeedback(events, search.FeedbackOptions{Params: opts.FeedbackParams, Now: func() time.Time { return now }})
		// As a serve does once its log is loaded: every replayed
		// request ranked before the first scored search, which makes
		// nothing of the log itself.
		if err := fb.Prepare(ctx, eng, spec.Mode, &spec.Params); err != nil {
			return nil, err
		}
		spec.Label = runName(spec) + FeedbackSuffix
		rr, err := runOne(ctx, withFeedback{eng, fb}, ds, spec, ks, limit, opts.Confidence, opts.Progress)
		if err != nil {
			return nil, err
		}
		p := fb.Params()
		rr.Params["feedback_weight"] = p.Weight
		rr.Params["feedback_min_similarity"] = p.MinSimilarity
		rr.Params["feedback_tool_cap"] = p.ToolCap
		rr.Params["feedback_similarity"] = p.Similarity
		rr.Params["feedback_alike_min"] = p.AlikeMin
		rr.Params["feedback_outside_weight"] = p.OutsideWeight
		rr.Params["feedback_sibling_tightness"] = p.SiblingTightness
		rr.Params["feedback_agreement"] = p.Agreement
		rr.Params["feedback_sibling_by"] = p.SiblingBy
		rr.Params["feedback_events"] = len(events)
		out = append(out, rr)
	}
	return out, nil
}

// runName is the name a run is reported under.
func runName(spec RunSpec) string {
	if spec.Label != "" {
		return spec.Label
	}
	return string(spec.Mode)
}

// CompareFeedback adds to each dataset report's Comparisons every
// "<run>+feedback" run against its run, for every metric (paired
// bootstrap over the same scored queries).
func CompareFeedback(rep *Report, metrics []string) {
	for _, d := range rep.Datasets {
		byName := map[string]*RunReport{}
		for _, r := range d.Runs {
			byName[r.RunName()] = r
		}
		for _, run := range d.Runs {
			name := run.RunName()
			if len(name) <= len(FeedbackSuffix) || name[len(name)-len(FeedbackSuffix):] != FeedbackSuffix {
				continue
			}
			base := byName[name[:len(name)-len(FeedbackSuffix)]]
			if base == nil {
				continue
			}
			for _, m := range metrics {
				if hasComparison(d, name, base.RunName(), m) {
					continue
				}
				diffs := make([]float64, len(run.perQuery))
				for i := range diffs {
					diffs[i] = run.perQuery[i].metrics[m] - base.perQuery[i].metrics[m]
				}
				mean, lo, hi := PairedBootstrap(diffs, BootstrapSamples, 1)
				d.Comparisons = append(d.Comparisons, Comparison{
					Run: name, Baseline: base.RunName(), Metric: m,
					Diff: round4(mean), Low: round4(lo), High: round4(hi),
					Significant: lo > 0 || hi < 0,
				})
			}
		}
	}
}

func hasComparison(d *DatasetReport, run, base, metric string) bool {
	for _, c := range d.Comparisons {
		if c.Run == run && c.Baseline == base && c.Metric == metric {
			return true
		}
	}
	return false
}

// checkFeedbackSplit validates Options.FeedbackSplit.
func checkFeedbackSplit(share float64) error {
	if share < 0 || share >= 1 {
		return fmt.Errorf("feedback split %g: want a share from 0 (off) to below 1, e.g. 0.5", share)
	}
	return nil
}
