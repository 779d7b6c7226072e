// Package store owns toolscout's data dir: the one package that opens
// its files, and the two indexes in their folders.
//
// Place in the flow: between the indexes and search. cmd opens a
// [Store] in the data dir for its catalog set ([Options].Set: the store
// finds or makes the set's folder, named by its files; [Store.Prune] removes
// the sets no longer used), or in memory, with the set's catalog files
// ([Options].Catalog) and asks
// it for their catalog ([Store.Catalog]): the store alone decides
// whether it is read back from the catalog cache or built from the
// files (taking the previous build's unchanged tools over) and saved.
// search.Live brings the store's two indexes (index/keyword's Bleve index
// in keyword.bleve/, index/vector's collections in vectors/) to each
// catalog through [Store.SyncWith], the one path that writes them (the
// tests' [Store.Sync] is the same call). On its vector path the store
// runs the embedder's fit itself, through the interfaces it declares
// ([Fitter], [FitSaver], [FitCounter]: it imports no embedder): the
// built-in embedder's statistics restored from fit-*.bin
// ([Store.RestoreFit]) or fitted and saved (fit.go). The other files
// that make a start cheap: the
// catalog cache (catalog.bin, catalog.delta: [Store.CachedCatalog],
// [Store.SaveCatalog]) and the tools each upstream server
// listed last (upstreams.bin: [Store.ListedTools]), and what agents ran
// after their searches (feedback.log: [Store.Feedback]). What cannot be read
// is removed to be rebuilt, and said in [Store.Healed]. Files of earlier
// formats are read by one migration step alone (migrate.go), run when a
// folder opens for writing, before its indexes: the readers know only
// the current formats, and a read-only open refuses a folder the step
// has not seen ([ErrNewerFormat] one of a newer toolscout). The definitions
// approved for each upstream tool (pins.bin: [Store.Pins];
// the policy is index/pin's) are the one file two processes update:
// serve and toolscout approve, each Update under an exclusive lock
// (pins.lock); each write keeps the previous generation
// (pins.bin.prev), and a damaged file is rebuilt from it, or held for
// review, never trusted anew (index/pin's Review).
//
// In toolscout one function opens a data dir, cmd/toolscout's openStore
// (TestOneStartUpPath); eval is handed an opener; [Memory] is a store
// that opens nothing.
//
//	st, err := store.OpenWith(dir, store.Options{Catalog: src, Logger: log}) // dir "" keeps everything in memory
//	if err != nil { ... }
//	defer st.Close() // after the catalog's save
//	cat, err := st.Catalog(ctx)
package store
