// Package vector is toolscout's vector store: one collection per
// embedder, model and dimension, kept on disk as one checksummed
// snapshot file each (the store of record, with a delta file beside it
// for small changes) and queried by a scan of that snapshot, mapped
// into memory without a copy. Each vector is on disk once.
//
// Place in the flow: under the data dir. index/store opens a [Store] in
// its vectors/ folder and syncs it to each catalog (after the keyword
// index); search.Engine asks it for the nearest tools of a query's
// vector. It knows the catalog (index) and nothing of ranking, embedders'
// choice or MCP: the vectors come from a [DocumentEmbedder].
//
// chromem-go (github.com/philippgille/chromem-go), the project's chosen
// library for vectors, stays the library of the in-memory collections:
// [Store.QueryChromem] answers through a chromem-go collection filled
// from the snapshot (mirror, refill), and the migration reads the layouts
// of earlier toolscout versions through it (chromem-go's file per
// document, and its export in the two-file format, where the export was
// the store of record and a snapshot derived from it: every vector on
// disk twice). Those are migrated by one rebuild when a store opens for
// writing, said in [Store.Healed] ("vectors: migrating ..."), and then
// removed; the export's decoder and the per-document check are kept for
// that migration alone. The files' formats, the snapshot's and those
// readers, are package snapfile's (index/vector/snapfile, without
// chromem-go), fuzzed there (FuzzSnap, FuzzExport, FuzzLegacyDocument).
// Earlier snapshot formats are never read.
//
// Queries never write files. Healing and compaction are the open's and
// the sync's: [Open] (for writing) reads every collection with a delta
// file beside it and heals the delta (removed when damaged, stale or
// without its collection file) and the collection (TestOpenHealsDeltas);
// a collection without one is read on first use, and the write path
// (Sync) heals what it cannot read (removes it, or salvages a damaged
// matrix and writes it again); both say so in Healed. A query that is
// the first to read a damaged collection leaves the file as it is and
// fails with why (search ranks by keyword meanwhile, with a notice); a
// damaged or stale delta is left and the base served alone; either is
// said once in the log ([Store.SetLogger]). The next Sync reads the file
// again and heals it (TestQueriesWriteNothing).
//
//	vs, err := vector.Open("")  // "" keeps the vectors in memory
//	if err != nil { ... }
//	col := vector.Collection{Provider: "builtin", Model: "wordvec", Dims: 512}
//	if _, err := vs.Sync(ctx, col, cat, emb, vector.SyncOptions{}); err != nil { ... }
//	hits, err := vs.Query(ctx, col, queryVec, 5, "", "")
package vector
