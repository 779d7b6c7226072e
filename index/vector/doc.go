// Package vector is toolscout's vector store: one chromem-go collection
// per embedder, model and dimension, kept on disk as chromem-go exports
// with a mapped snapshot beside each, and queried by a scan of that
// snapshot.
//
// Place in the flow: under the data dir. index/store opens a [Store] in
// its vectors/ folder and syncs it to each catalog (after the keyword
// index); search.Engine asks it for the nearest tools of a query's
// vector. It knows the catalog (index) and nothing of ranking, embedders'
// choice or MCP: the vectors come from a [DocumentEmbedder].
//
//	vs, err := vector.Open("")  // "" keeps the vectors in memory
//	if err != nil { ... }
//	col := vector.Collection{Provider: "builtin", Model: "wordvec", Dims: 512}
//	if _, err := vs.Sync(ctx, col, cat, emb, vector.SyncOptions{}); err != nil { ... }
//	hits, err := vs.Query(ctx, col, queryVec, 5, "", "")
package vector
