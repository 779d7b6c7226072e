package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/index/vector"
)

// Embedder is the embedder a Live index ranks by meaning with, as Load
// and Swap take it: for the packages above search that hand one over
// without reaching into the embedders (server/boot).
type Embedder = embed.Embedder

// LiveOptions configures a Live index.
type LiveOptions struct {
	// Store holds both indexes; the Live index owns it and closes it.
	Store    *store.Store
	Embedder embed.Embedder // nil: keyword only
	Params   Params
	// Quarantine leaves the tools with poisoning flags (index.ScanTool)
	// out of every catalog.
	Quarantine bool
	// Known are the domains a source (the gateway) listed last time:
	// Load indexes them besides its specs, leaving out and logging those
	// that no longer make a valid catalog, as Update does, while the
	// specs are checked strictly. Follow then refreshes them from the
	// source.
	Known []index.DomainSpec
	// Progress reports vector embedding progress of the first build (Open).
	Progress func(done, total int)
	// Concurrency bounds embedding calls in flight (the embedder's default
	// when zero).
	Concurrency int
	// CacheSize is the query embedding cache size (see Options).
	CacheSize int
	// Serving says queries come as soon as the index loads (serve): the
	// store computes what the first query would (vector.Store.WarmOnRead).
	Serving bool
	Logger  *slog.Logger
}

// FollowOptions configures Follow.
type FollowOptions struct {
	// StartupWait bounds how long the first refresh waits for the source
	// to know every domain (DefaultStartupWait when zero): a slow
	// upstream server holds back the others' tools no longer than this.
	StartupWait time.Duration
	// Settle is how long a source's changes gather before a re-index
	// (DefaultSettle when zero): servers that list their tools moments
	// apart cost one re-index and one tools/list_changed.
	Settle time.Duration
}

// DefaultStartupWait is FollowOptions.StartupWait's default.
const DefaultStartupWait = 30 * time.Second

// DefaultSettle is FollowOptions.Settle's default.
const DefaultSettle = 200 * time.Millisecond

// Source is a set of domains that changes: the gateway's upstream servers.
type Source interface {
	// Specs returns the current domains.
	Specs() []index.DomainSpec
	// Changed receives after the domains changed.
	Changed() <-chan struct{}
	// WaitKnown returns once the source knows every domain's tools (an
	// upstream's from its last run, or listed now, or it failed once) or
	// ctx ends.
	WaitKnown(ctx context.Context)
}

// Live owns the indexed state: it is the one path from domain specs to a
// searchable engine. Each refresh builds the catalog (quarantine applied),
// syncs the store incrementally (the built-in embedder fitted, only new
// and changed tools embedded, vectors of older fingerprints pruned), swaps
// the catalog into the engine, then tells subscribers. Refreshes run one
// at a time; searches keep using the previous catalog until the swap.
type Live struct {
	store *store.Store
	eng   *Engine
	emb   embed.Embedder
	quar  bool
	known []index.DomainSpec // LiveOptions.Known, for Load
	conc  int
	log   *slog.Logger
	// serving: LiveOptions.Serving, for the stores Swap takes.
	serving bool

	mu sync.Mutex // serialises Load, refreshes, Swap and Close's end

	subsMu sync.Mutex
	subs   []func()

	// st is the one state (state.go): phase, following, closed; Loaded,
	// Settled and Ready are derived from it.
	st *state
	wg sync.WaitGroup
}

// Open builds the catalog of specs, brings the store's indexes to it and
// returns the Live index: NewLive and Load with opts.Embedder. Specs that
// do not make a valid catalog are an error here (they come from files the
// user can fix), while Update leaves invalid domains out.
func Open(ctx context.Context, opts LiveOptions, specs []index.DomainSpec) (*Live, store.Stats, error) {
	l, err := NewLive(opts)
	if err != nil {
		return nil, store.Stats{}, err
	}
	st, err := l.Load(ctx, specs, opts.Embedder, opts.Progress)
	if err != nil {
		return nil, st, err
	}
	return l, st, nil
}

// stillLoading is the notice of a semantic or hybrid request answered
// while Load embeds.
const stillLoading = "the semantic index is still loading"

// NewLive returns a Live index over an empty catalog, for Load to fill:
// a server answers initialize at once and its first searches as soon as
// the keyword index is ready. opts.Embedder and opts.Progress are for
// Open; Load takes its own.
func NewLive(opts LiveOptions) (*Live, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := opts.Params.Check(); err != nil {
		return nil, fmt.Errorf("ranking parameters: %w", err)
	}
	empty, err := index.NewCatalog(nil)
	if err != nil {
		return nil, err
	}
	l := &Live{store: opts.Store, quar: opts.Quarantine, known: opts.Known, conc: opts.Concurrency, serving: opts.Serving, log: log, st: newState()}
	l.warm(opts.Store)
	l.eng = NewEngine(Options{
		Catalog: empty, Keyword: opts.Store.Keyword, Vectors: opts.Store.Vectors,
		Params: opts.Params, CacheSize: opts.CacheSize, Logger: log,
	})
	l.eng.setEmbedder(nil, stillLoading)
	return l, nil
}

// warm has st's vector store compute what a first query needs as it
// reads, when l serves (LiveOptions.Serving).
func (l *Live) warm(st *store.Store) {
	if l.serving && st != nil && st.Vectors != nil {
		st.Vectors.WarmOnRead()
	}
}

// Load builds the first catalog from specs (strictly: an invalid spec is
// an error) and LiveOptions.Known (leniently), and indexes it in two
// steps: the keyword index, after which the catalog is searchable
// (Loaded closes; semantic and hybrid requests are ranked by keyword
// with a notice meanwhile), then the vectors of emb (nil: keyword only),
// after which emb ranks. progress reports embedding.
// When the store was opened with catalog files (store.Options.Catalog),
// the catalog is the store's (Store.Catalog: cached, or built and saved)
// and specs are not used. What the store found damaged and healed
// (Store.Healed) is logged.
func (l *Live) Load(ctx context.Context, specs []index.DomainSpec, emb embed.Embedder, progress func(done, total int)) (store.Stats, error) {
	return l.load(ctx, func() (*index.Catalog, error) { return l.build(specs, l.known, nil) }, emb, progress)
}

// build returns the catalog of strict and lenient domains, quarantine
// applied (index.NewCatalogSkipping), logging the lenient domains left
// out.
func (l *Live) build(strict, lenient []index.DomainSpec, prev *index.Catalog) (*index.Catalog, error) {
	cat, skipped, err := index.NewCatalogSkipping(l.quarantine(strict), l.quarantine(lenient), prev)
	for _, e := range skipped {
		l.log.Error("domain left out of the index", "err", e)
	}
	if cat != nil {
		for _, c := range cat.Clashes() {
			if prev == nil || prev.Tool(c.QualifiedName) == nil { // said once, when it starts
				l.log.Warn("tool listed under another name: its name clashes with another tool's; rename one of them in its server to call it by its own", "domain", c.Domain, "tool", c.Name, "listed_as", c.QualifiedName, "clashes_with", c.With)
			}
		}
	}
	return cat, err
}

func (l *Live) load(ctx context.Context, build func() (*index.Catalog, error), emb embed.Embedder, progress func(done, total int)) (store.Stats, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.st.set(func(s *State) { s.Phase = Settled })
	// A store opened with catalog files gives their catalog: read back
	// from the data dir, or built from the files and saved there while
	// the indexes sync (the store decides); load returns after the save.
	cat, err := l.store.Catalog(ctx)
	if cat != nil {
		defer l.store.WaitSaved()
	} else if err == nil {
		cat, err = build()
	}
	if err != nil {
		return store.Stats{}, err
	}
	l.emb = emb
	if cur := l.eng.Catalog(); cur == nil || cur.Len() == 0 {
		// A first load (over NewLive's empty catalog): the domain text (the longest work of a start
		// after the catalog's decoding, 0.2 s of CPU at 100k tools) is
		// built beside the indexes' opening rather than after the
		// keyword index, so that the first search does not wait for it.
		// Not on a reload: searches of the current catalog would
		// rebuild theirs (Engine.domainTextOf keeps one).
		l.eng.prepareDomainText(cat)
		if l.serving {
			// And the name lookups (a sort of 400k keys at 100k tools),
			// which every query asks (exact names): built after the
			// load, they were on a start's way to its first answer,
			// alone on a core. Here they are built beside the indexes'
			// opening, and Settled waits for them, so that a query never
			// finds them half-way.
			var lookups sync.WaitGroup
			lookups.Go(cat.PrepareLookups)
			defer lookups.Wait()
		}
	}
	opts := store.SyncOptions{KeywordDone: func() {
		l.eng.SetCatalog(cat)
		// Subscribers first: whoever waits for Loaded finds them up to
		// date (the server's directly listed tools).
		l.notifyLocked()
		l.st.set(func(s *State) { s.Phase = Searchable })
	}}
	if emb != nil {
		opts = l.vectorSync(opts, progress)
		// A catalog built from the previous build syncs its vectors
		// beside the keyword index: a re-index of a few changes waits for
		// the longer of the two instead of their sum.
		_, opts.Beside = cat.Changes()
	}
	st, err := l.store.SyncWith(ctx, cat, opts)
	// What the open and the sync found damaged and rebuilt.
	for _, h := range l.store.Healed() {
		l.log.Warn(h)
	}
	if err != nil {
		return st, fmt.Errorf("index catalog: %w", err)
	}
	l.eng.setEmbedder(emb, "")
	return st, nil
}

// Swap makes next, with its catalog cat and the embedder emb, what
// searches use, in one step: a read-only server picking up a newer build.
// The store must hold cat's indexes already (a read-only store only
// checks that it does); if it does not, Swap returns the error and the
// current ones stay. Searches started before the swap finish on the
// previous indexes, which are closed once they have. Subscribers are told,
// as after a refresh.
func (l *Live) Swap(ctx context.Context, next *store.Store, cat *index.Catalog, emb embed.Embedder) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st.get().Closed {
		// A store swapped in now would never be closed, and its
		// searches would run on a closed index.
		return ErrClosed
	}
	oldStore, oldEmb := l.store, l.emb
	l.store, l.emb = next, emb
	restore := func(err error) error {
		l.store, l.emb = oldStore, oldEmb
		return err
	}
	var opts store.SyncOptions
	if emb != nil {
		opts = l.vectorSync(opts, nil)
	}
	l.warm(next)
	if _, err := next.SyncWith(ctx, cat, opts); err != nil {
		return restore(fmt.Errorf("the new build's indexes: %w", err))
	}
	drained := l.eng.swapIndexes(next.Keyword, next.Vectors, emb, cat)
	l.log.Info("swapped in a newer build", "dir", next.Dir(), "tools", cat.Len())
	l.notifyLocked()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		drained()
		if err := oldStore.Close(); err != nil {
			l.log.Warn("closing the previous build's indexes", "err", err)
		}
	}()
	return nil
}

// UseCatalog makes cat the catalog without indexing it, after Load
// failed: its tools can be listed and run, not searched (the fallback of
// a server whose index cannot open).
func (l *Live) UseCatalog(cat *index.Catalog) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.eng.SetCatalog(cat)
	l.notifyLocked()
	l.st.set(func(s *State) { s.Phase = Settled })
}

// State returns the index's state now (state.go).
func (l *Live) State() State { return l.st.get() }

// Loaded is closed once Load has made the first catalog searchable
// (Phase Searchable).
func (l *Live) Loaded() <-chan struct{} { return l.st.channel(&l.st.loaded) }

// Settled is closed once Load has returned: semantic ranking is ready
// too (or failed) (Phase Settled).
func (l *Live) Settled() <-chan struct{} { return l.st.channel(&l.st.settled) }

// Engine returns the engine over the live catalog.
func (l *Live) Engine() *Engine { return l.eng }

// Subscribe registers f, called after each refresh has swapped in a new
// catalog (one call at a time, in the refreshing goroutine; f must not
// call Update).
func (l *Live) Subscribe(f func()) {
	l.subsMu.Lock()
	l.subs = append(l.subs, f)
	l.subsMu.Unlock()
}

// Update re-indexes from specs: only new and changed tools are embedded.
// One invalid domain does not hold back the others: it is left out and
// logged.
func (l *Live) Update(ctx context.Context, specs []index.DomainSpec) (store.Stats, error) {
	// Tools whose source did not change are taken from the catalog served
	// now instead of being checked and hashed again.
	cat, err := l.build(nil, specs, l.eng.Catalog())
	if err != nil {
		return store.Stats{}, err
	}
	cat.PrepareLookups() // here, not in the first query after the swap
	l.mu.Lock()
	defer l.mu.Unlock()
	var opts store.SyncOptions
	if l.emb != nil {
		opts = l.vectorSync(opts, nil)
	}
	st, err := l.store.SyncWith(ctx, cat, opts)
	if err != nil {
		return st, fmt.Errorf("index catalog: %w", err)
	}
	l.eng.SetCatalog(cat)
	l.log.Info("re-indexed", "tools", cat.Len(), "keyword", st.Keyword.String(), "vectors", st.Vectors.String())
	l.notifyLocked()
	return st, nil
}

// Follow re-indexes from src in the background: once Load has returned
// and src knows every domain (or StartupWait passed), then after each
// change, until ctx ends or Close. Changes that come within Settle of
// each other make one re-index. Ready is open until the first of these
// refreshes is done.
func (l *Live) Follow(ctx context.Context, src Source, opts FollowOptions) {
	if opts.StartupWait <= 0 {
		opts.StartupWait = DefaultStartupWait
	}
	if opts.Settle <= 0 {
		opts.Settle = DefaultSettle
	}
	ctx, cancel := context.WithCancel(ctx)
	l.st.set(func(s *State) { s.Following, s.CaughtUp = true, false })
	l.st.mu.Lock()
	l.st.stop = cancel
	l.st.mu.Unlock()
	settled := l.Settled()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		// Load's catalog (the files' domains and what the source listed
		// last time) is older than anything the source says now: the
		// first refresh comes after it, or Load would replace it.
		select {
		case <-settled:
		case <-ctx.Done():
		}
		// While the source does not know every domain yet, each change
		// (a server that listed its tools) is indexed as it comes, so
		// that one server stuck for the whole wait does not keep the
		// others' tools out of the answers meanwhile; Ready waits for
		// all of them, or the wait.
		wctx, wcancel := context.WithTimeout(ctx, opts.StartupWait)
		known := make(chan struct{})
		go func() {
			src.WaitKnown(wctx)
			close(known)
		}()
	waiting:
		for {
			select {
			case <-known:
				break waiting
			case <-src.Changed():
			}
			settle := time.NewTimer(opts.Settle)
			select {
			case <-known:
				settle.Stop()
				break waiting // the whole first round: indexed below
			case <-settle.C:
			}
			if _, err := l.Update(ctx, src.Specs()); err != nil && ctx.Err() == nil {
				l.log.Error("index of the upstreams that answered first failed", "err", err)
			}
		}
		wcancel()
		if ctx.Err() == nil {
			if _, err := l.Update(ctx, src.Specs()); err != nil {
				l.log.Error("index after connecting upstreams failed", "err", err)
			}
		}
		l.st.set(func(s *State) { s.CaughtUp = true })
		for {
			select {
			case <-ctx.Done():
				return
			case <-src.Changed():
			}
			settle := time.NewTimer(opts.Settle)
			select {
			case <-ctx.Done():
				settle.Stop()
				return
			case <-settle.C:
			}
			select {
			case <-src.Changed(): // folded into this re-index
			default:
			}
			if _, err := l.Update(ctx, src.Specs()); err != nil && ctx.Err() == nil {
				l.log.Error("re-index after upstream change failed", "err", err)
			}
		}
	}()
}

// Ready is closed once the index holds what its source had at start (at
// once without a source).
func (l *Live) Ready() <-chan struct{} { return l.st.channel(&l.st.ready) }

// Close stops following the source, waits for a running Load or Update,
// and closes the store.
func (l *Live) Close() error {
	l.st.mu.Lock()
	stop := l.st.stop
	l.st.mu.Unlock()
	if stop != nil {
		stop()
	}
	// Closed first: a Swap running now finishes (and starts closing the
	// build it replaced, which Wait then waits for); a later one is
	// refused.
	l.mu.Lock()
	l.st.set(func(s *State) { s.Closed = true })
	l.mu.Unlock()
	l.wg.Wait()
	// A Load or Update still running (its context ended) finishes its
	// write before the store closes under it.
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.store.Close()
}

// ErrClosed is Swap's error once the live index is closed: the caller
// keeps the store it offered, and closes it.
var ErrClosed = errors.New("the live index is closed")

func (l *Live) quarantine(specs []index.DomainSpec) []index.DomainSpec {
	if !l.quar {
		return specs
	}
	kept, dropped := index.Quarantine(specs)
	if len(dropped) > 0 {
		l.log.Warn("quarantined tools with poisoning flags (toolscout.quarantine)", "tools", dropped)
	}
	return kept
}

// notifyLocked calls the subscribers; l.mu is held.
func (l *Live) notifyLocked() {
	l.subsMu.Lock()
	subs := slices.Clone(l.subs)
	l.subsMu.Unlock()
	for _, f := range subs {
		f()
	}
}

// vectorSync adds to opts what the store needs to sync the vectors of
// the live embedder: the store runs its fit (index/store's fit.go) and
// prunes the vectors of its older fingerprints; Prepare checks an
// embedder of unknown size and names the collection.
func (l *Live) vectorSync(opts store.SyncOptions, progress func(done, total int)) store.SyncOptions {
	emb := l.emb
	opts.Embedder = emb
	opts.Vectors = vector.SyncOptions{Progress: progress, Concurrency: l.conc}
	// Vectors of an older lexicon are never read again.
	_, opts.Prune = emb.(embed.Fingerprinter)
	opts.Prepare = func(ctx context.Context) (vector.Collection, error) {
		if c, ok := emb.(embed.Checker); ok && emb.Info().Dims == 0 {
			if err := c.Check(ctx); err != nil {
				return vector.Collection{}, err
			}
		}
		return collectionOf(emb, emb.Info().Dims), nil
	}
	return opts
}

// collectionOf names the vector collection of an embedder's vectors of
// dimension dims.
func collectionOf(emb embed.Embedder, dims int) vector.Collection {
	info := emb.Info()
	model := info.Model
	if f, ok := emb.(embed.Fingerprinter); ok {
		model += "@" + f.Fingerprint()
	}
	return vector.Collection{Provider: info.Provider, Model: model, Dims: dims}
}
