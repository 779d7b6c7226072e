// Package keyword is toolscout's keyword index: a Bleve (scorch) index
// of every tool, scored with BM25 over weighted fields, and everything
// that reaches into Bleve's internals to make it fast and safe: the
// identifier-aware analyzers (registered with Bleve in init), the
// summing query that scores term at a time (reading plain BM25 term
// clauses from their postings and scoring them with Bleve's own formula,
// the same to the bit, taat.go), queries divided into ranges
// of document numbers (and the Bleve global, DisjunctionHeapTakeover,
// that split.go's init raises), the field lengths saved for BM25, and
// the checks of root.bolt and the zap segments before Bleve opens them.
//
// Place in the flow: under the data dir. index/store opens an [Index] in
// its keyword.bleve/ folder and syncs it to each catalog (before the
// vectors); search.Engine asks it for the best tools of a query's words.
// It knows the catalog (index) and nothing of ranking across modes,
// embedders or MCP.
//
//	kw, err := keyword.Open("")  // "" keeps the index in memory
//	if err != nil { ... }
//	if _, err := kw.Sync(ctx, cat); err != nil { ... }
//	hits, err := kw.Search(ctx, keyword.Query{Text: "open a ticket", Size: 5})
//
// Each tool is one document: its qualified name and name kept whole,
// its name's words, and its whole text (name words, title, description,
// parameters) twice, stemmed and as written (QueryFields). Fields of
// each part alone were indexed until no default weight read them: they
// took a fifth of a cold index's CPU.
//
// Sync compares the catalog with the manifest (each tool's content hash
// and its fields' word counts, bm25.go) and touches only the tools that
// changed: their documents, and BM25's field totals corrected by their
// old and new counts (bm25stats.go), equal to the bit to a count of the
// whole catalog. A manifest without the counts (written by an earlier
// toolscout) makes one Sync count every tool.
//
// An index of an earlier format is brought to the current one by
// [Migrate] (migrate.go, the one file that knows those formats), which
// index/store's migration step calls before [Open].
package keyword
