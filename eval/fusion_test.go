package eval

import (
	"context"
	"math"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/internal/racetest"
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

// TestFusionObjectiveWorst: the objective a fit maximises counts, on top
// of the mean shortfall below the floors, Worst times the largest
// shortfall of one set, and nothing for a set at or above its floor.
// Two real sets: the built-in dataset's short requests and its
// multi-step tasks, captured once over the built-in catalog.
func TestFusionObjectiveWorst(t *testing.T) {
	racetest.Plain(t)
	ctx := context.Background()
	emb := embed.NewBuiltin(embed.BuiltinOptions{})
	var sets []*FusionSet
	for _, load := range []func() (*Dataset, error){Builtin, BuiltinLong} {
		ds, err := load()
		if err != nil {
			t.Fatal(err)
		}
		eng, closeEng, err := OpenEngine(ctx, ds, emb, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		set, err := CaptureFusion(ctx, eng, ds, nil)
		closeEng()
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, set)
	}
	m := search.ConvexModel(search.Params{})
	CenterShapes(&m, sets)
	_, got := FusionObjective(sets, &m, 0)
	for _, tc := range []struct {
		name         string
		above        [2]float64 // each set's floor less its nDCG@10
		worst, extra float64    // Worst, and what it takes off the objective
	}{
		{"one set below", [2]float64{0.05, -0.1}, 3, 3 * 0.05},
		{"both below: the larger counts", [2]float64{0.02, 0.07}, 2, 2 * 0.07},
		{"both above: nothing", [2]float64{-0.01, -0.2}, 5, 0},
		{"worst 0: as FusionObjective", [2]float64{0.05, 0.07}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, s := range sets {
				s.Floor = got[i] + tc.above[i]
			}
			base, _ := FusionObjective(sets, &m, 2)
			obj, _ := fusionObjective(sets, &m, 2, tc.worst)
			if math.Abs(base-tc.extra-obj) > 1e-9 {
				t.Errorf("fusionObjective(worst %g) = %.6f, want FusionObjective %.6f less %.6f", tc.worst, obj, base, tc.extra)
			}
		})
	}
}
