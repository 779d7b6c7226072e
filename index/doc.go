// Package index holds toolscout's tool model: the catalog, how it is
// built and checked, and the codec of its cache.
//
// Place in the flow: the lowest layer. It knows nothing of indexes,
// embedders, ranking, MCP or the data dir: search.Live builds each
// Catalog from domain specs, the indexes (index/keyword, index/vector)
// index it, index/store caches it, and the server reads tools from it.
//
// A [Catalog] is loaded from one or more catalog.json files (or built from
// upstream MCP servers) and validated as a whole: nothing half-loaded is ever
// indexed. Every tool is then indexed twice, by two packages built on this
// one: a Bleve index scored with BM25 (index/keyword) and a chromem-go
// vector store (index/vector) that keeps one collection per embedder,
// model and dimension, both in the data dir that index/store owns. Both
// re-index incrementally by comparing per-tool content hashes ([Tool]'s
// Hash), and skip even that when the catalog's hash is the one they were
// synced to; what they share is here ([SyncStats], [ErrReadOnly],
// [ErrNoIndex], [ErrDamaged]). A built catalog can be cached,
// keyed by the bytes of its files ([CatalogSource]; the format here,
// the files in index/store), so that a start with unchanged files does
// no per-tool work. A Catalog is never changed once built: the previous
// build read back from the cache to be taken over by the next one is a
// [Last], not a Catalog, and is spent by [NewCatalogFromLast]. A
// [ToolSpec] is plain data: a re-index takes a tool over from the
// previous build when its spec equals that tool's in value, and what
// the files' bytes were ([CatalogSource.SpecsFromLast] reads again only
// the tools whose bytes changed) travels in the Last's reuse table, not
// in the specs.
//
//	cat, err := index.LoadCatalogFiles([]string{"catalog.json"})
//	if err != nil { ... }
//	t, err := cat.Resolve("jira/create_issue")
package index
