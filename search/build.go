package search

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
)

// BuildOptions prepares an Engine over a store.
type BuildOptions struct {
	Store    *index.Store
	Catalog  *index.Catalog
	Embedder embed.Embedder // nil: keyword only
	Params   Params
	// Progress reports vector embedding progress.
	Progress func(done, total int)
	// Concurrency bounds embedding calls in flight.
	Concurrency int
	// CacheSize is the query embedding cache size (see Options).
	CacheSize int
	Logger    *slog.Logger
}

// Build syncs the store's indexes with the catalog (incrementally: only new
// and changed tools are indexed and embedded) and returns an engine.
func Build(ctx context.Context, opts BuildOptions) (*Engine, index.StoreStats, error) {
	e := NewEngine(Options{
		Catalog:   opts.Catalog,
		Keyword:   opts.Store.Keyword,
		Vectors:   opts.Store.Vectors,
		Embedder:  opts.Embedder,
		Params:    opts.Params,
		CacheSize: opts.CacheSize,
		Logger:    opts.Logger,
	})
	st, err := e.reindex(ctx, opts.Store, opts.Catalog, opts.Progress, opts.Concurrency)
	if err != nil {
		return nil, st, err
	}
	return e, st, nil
}

// Reindex syncs the store with a new catalog and swaps it in when both
// indexes hold it. Searches keep using the old catalog until then.
func (e *Engine) Reindex(ctx context.Context, store *index.Store, cat *index.Catalog, progress func(done, total int)) (index.StoreStats, error) {
	st, err := e.reindex(ctx, store, cat, progress, 0)
	if err != nil {
		return st, err
	}
	e.SetCatalog(cat)
	return st, nil
}

func (e *Engine) reindex(ctx context.Context, store *index.Store, cat *index.Catalog, progress func(done, total int), conc int) (index.StoreStats, error) {
	var col index.Collection
	var docEmb index.DocumentEmbedder
	if e.emb != nil {
		if f, ok := e.emb.(embed.Fitter); ok {
			docs := make([]string, 0, cat.Len())
			for _, t := range cat.Tools() {
				docs = append(docs, index.DocumentText(t))
			}
			f.Fit(docs)
		}
		if c, ok := e.emb.(embed.Checker); ok && e.emb.Info().Dims == 0 {
			if err := c.Check(ctx); err != nil {
				return index.StoreStats{}, err
			}
		}
		col = collectionOf(e.emb, e.emb.Info().Dims)
		docEmb = e.emb
	}
	st, err := store.Sync(ctx, cat, docEmb, col, index.VectorSyncOptions{Progress: progress, Concurrency: conc})
	if err != nil {
		return st, fmt.Errorf("index catalog: %w", err)
	}
	if _, ok := e.emb.(embed.Fingerprinter); ok {
		// Vectors of an older lexicon are never read again.
		if gone, err := store.Vectors.Prune(col.Provider, col); err != nil {
			e.log.Warn("could not delete old vectors", "err", err)
		} else if len(gone) > 0 {
			e.log.Info("deleted vectors of an older built-in lexicon", "collections", gone)
		}
	}
	return st, nil
}

// collectionOf names the vector collection of an embedder's vectors of
// dimension dims.
func collectionOf(emb embed.Embedder, dims int) index.Collection {
	info := emb.Info()
	model := info.Model
	if f, ok := emb.(embed.Fingerprinter); ok {
		model += "@" + f.Fingerprint()
	}
	return index.Collection{Provider: info.Provider, Model: model, Dims: dims}
}
