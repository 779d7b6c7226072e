// Package search ranks a catalog's tools for a natural-language request.
//
// Three modes: [Keyword] (BM25 over the Bleve index), [Semantic] (nearest
// neighbours in the vector store) and [Hybrid] (weighted Reciprocal Rank
// Fusion of both lists, plus a boost when the query names a tool exactly).
// When the embedder fails, semantic and hybrid requests still answer, ranked
// by keyword, with a notice saying why.
//
//	eng := search.NewEngine(search.Options{Catalog: cat, Keyword: kw, Vectors: vs, Embedder: e})
//	resp, err := eng.Search(ctx, search.Request{Query: "who is on call", Limit: 5})
package search
