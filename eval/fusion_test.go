package eval

import (
	"context"
	"math"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/search"
)

// TestFusionFit: on the built-in dataset's dev split, a captured query
// scores under a model exactly as Evaluate scores the same model's hybrid
// run, and a fit started from the convex fusion ends no lower on its own
// objective.
func TestFusionFit(t *testing.T) {
	full, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	ds := &Dataset{Name: "builtin/dev", Catalog: full.Catalog}
	for _, q := range full.Queries {
		if q.Split == "dev" && len(ds.Queries) < 150 {
			ds.Queries = append(ds.Queries, q)
		}
	}
	ctx := context.Background()
	emb := embed.NewBuiltin(embed.BuiltinOptions{})
	eng, closeEng, err := OpenEngine(ctx, ds, emb, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeEng()
	set, err := CaptureFusion(ctx, eng, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := search.ConvexModel(search.Params{})
	CenterShapes(&start, []*FusionSet{set})
	rep, err := Evaluate(ctx, []*Dataset{ds}, Options{Embedder: emb, Runs: []RunSpec{{Mode: search.Hybrid, Params: search.Params{Fusion: search.FusionLearned, FusionModel: &start}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := set.NDCG(&start)
	for i, q := range rep.Datasets[0].Runs[0].perQuery {
		if math.Abs(got[i]-q.metrics["ndcg@10"]) > 1e-9 {
			t.Fatalf("query %s: the fit scores nDCG@10 %v, Evaluate %v", ds.Queries[i].ID, got[i], q.metrics["ndcg@10"])
		}
	}
	before, _ := FusionObjective([]*FusionSet{set}, &start, 2)
	fit := FitFusion([]*FusionSet{set}, start, FitOptions{Rounds: 2, Frozen: map[string]bool{"weights.semantic": true}})
	after, _ := FusionObjective([]*FusionSet{set}, &fit, 2)
	if after < before-1e-4 { // the fit's parameters are rounded to 4 places
		t.Errorf("objective %.5f after the fit, %.5f before", after, before)
	}
	if fit.Weights[1] != start.Weights[1] {
		t.Errorf("frozen weights.semantic moved: %v -> %v", start.Weights[1], fit.Weights[1])
	}
}
