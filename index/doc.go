// Package index holds toolscout's tool model and its two indexes.
//
// Place in the flow: the lowest layer. It knows nothing of embedders'
// choice, ranking, MCP or the data dir (index/store's): search.Live
// drives its Sync, search.Engine queries it, and the server reads tools
// from its Catalog.
//
// A [Catalog] is loaded from one or more catalog.json files (or built from
// upstream MCP servers) and validated as a whole: nothing half-loaded is ever
// indexed. Every tool is then indexed twice: a Bleve index scored with BM25
// ([KeywordIndex]) and a chromem-go vector store (index/vector) that keeps one
// collection per embedder, model and dimension. Both re-index incrementally by
// comparing per-tool content hashes, and skip even that when the catalog's
// hash is the one they were synced to. A built catalog can be cached,
// keyed by the bytes of its files ([CatalogSource]; the format here,
// the files in index/store), so that a start with unchanged files does
// no per-tool work.
//
//	cat, err := index.LoadCatalogFiles([]string{"catalog.json"})
//	if err != nil { ... }
//	kw, err := index.OpenKeyword("")  // "" keeps the index in memory
//	if err != nil { ... }
//	if _, err := kw.Sync(ctx, cat); err != nil { ... }
//	hits, err := kw.Search(ctx, index.KeywordQuery{Text: "open a ticket", Size: 5})
package index
