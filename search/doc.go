// Package search ranks a catalog's tools for a natural-language request,
// and owns the path from domain specs to a searchable index.
//
// Place in the flow: cmd (or eval) opens a [Live] index over an
// store.Store with domain specs from catalog files, and hands it the
// gateway as a [Source] to follow; [Live] builds the catalog, syncs both
// indexes and swaps the catalog into its [Engine]; the server subscribes
// to [Live] and asks the [Engine] for rankings. A Live index's state is
// one value, [State] (state.go): its [Phase] (loading, searchable by
// keyword, settled), whether it follows a source and has caught up, and
// whether it is closed; Loaded, Settled and Ready are channels derived
// from it. The store runs the embedder's fit (index/store's fit.go):
// Live names the vector collection and nothing more of the embedder.
//
// Three modes: [Keyword] (BM25 over the Bleve index), [Semantic] (nearest
// neighbours in the vector store) and [Hybrid] (weighted Reciprocal Rank
// Fusion of both lists, plus a boost when the query names a tool exactly).
// When the embedder fails, semantic and hybrid requests still answer, ranked
// by keyword, with a notice saying why.
//
//	live, _, err := search.Open(ctx, search.LiveOptions{Store: store, Embedder: e}, specs)
//	resp, err := live.Engine().Search(ctx, search.Request{Query: "who is on call", Limit: 5})
package search
