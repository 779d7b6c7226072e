// Package eval measures how well ranking strategies find the right tools.
//
// Place in the flow: beside server, on top of search. It opens a
// search.Live per dataset and embedder and ranks through the same
// search.Engine the server uses, so what it measures is what clients get.
//
// A [Dataset] is a catalog plus labelled queries (a folder holding
// catalog.json and queries.jsonl, or the built-in one). [Evaluate] indexes
// the catalog once per embedder, runs every query through the search package
// exactly as the server does, and reports recall@k, MRR, nDCG@10 and
// latency per run; [Compare] gives each run's difference from a baseline
// with a paired bootstrap confidence interval.
//
//	ds, _ := eval.Builtin()
//	rep, err := eval.Evaluate(ctx, []*eval.Dataset{ds}, eval.Options{Runs: eval.ModeRuns(search.Modes)})
package eval
