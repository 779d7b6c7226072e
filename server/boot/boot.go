package boot

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/gateway"
)

// DefaultVerifyDelay is Options.VerifyDelay's default.
const DefaultVerifyDelay = 10 * time.Second

// Options configures a start. Live, Store and Embedder are required.
type Options struct {
	// Live is the live index, still empty, over Store; the start loads
	// it, and Close closes it (and the store it serves then).
	Live  *search.Live
	Store *store.Store
	// Gateway, when there are upstream servers, is followed by Live and
	// started by Open; Close closes it.
	Gateway *gateway.Gateway
	// StartupWait bounds how long Live's first refresh from the gateway
	// waits for every upstream server (search.FollowOptions).
	StartupWait time.Duration
	// Embedder returns the embedder the index loads with (made once, by
	// the caller: it reads flags).
	Embedder func() (search.Embedder, error)
	// Base are the catalog files' domains to load; nil when the store
	// gives the catalog (store.Options.Catalog). Known are the domains the
	// upstream servers listed on their last run. Cached is the catalog
	// the store holds already, if any. The three make the fallback's
	// catalog.
	Base, Known []index.DomainSpec
	Cached      *index.Catalog
	// Fallback: when the index cannot load, the catalog is still served,
	// every tool listed directly (Fallbacker.FallBackToEager), instead of
	// the server stopping.
	Fallback bool
	// Stop is called with the load's error when the index cannot load
	// and is not served otherwise: the server should stop with it.
	Stop func(error)
	// Progress, when set, reports the embedding of the first load: it
	// returns the function told of progress and the one called at its end.
	Progress func(search.Embedder) (update func(done, total int), finish func())
	// AfterLoad, when set, is called once the load has ended, well or not.
	AfterLoad func()
	// VerifyDelay is how long after the index has loaded the data dir's
	// other files are checked (store.Verify): DefaultVerifyDelay when
	// zero, never when negative.
	VerifyDelay time.Duration
	// Feedback, when the server ranks with feedback, is reset to each
	// newer build's events.
	Feedback *search.Feedback
	// Builds, with Every set, swaps in the newer builds a read-only
	// data dir leads to.
	Builds Builds
	Logger *slog.Logger
}

// Fallbacker lists every tool directly when the meta layer cannot serve:
// the server (server.Server).
type Fallbacker interface {
	FallBackToEager(reason string) bool
}

// Starter owns one server's start: New, then Open, then Close.
type Starter struct {
	opts  Options
	log   *slog.Logger
	ready *Readiness
	store atomic.Pointer[store.Store]

	mu     sync.Mutex
	cancel context.CancelFunc // Open's; nil before
	closed bool
	wg     sync.WaitGroup
}

// New returns the start of opts, not begun: its Readiness is at
// Starting until Open.
func New(opts Options) *Starter {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.VerifyDelay == 0 {
		opts.VerifyDelay = DefaultVerifyDelay
	}
	s := &Starter{opts: opts, log: opts.Logger, ready: NewReadiness()}
	s.ready.Follow(opts.Live)
	s.store.Store(opts.Store)
	return s
}

// Readiness returns how far the start has come.
func (s *Starter) Readiness() *Readiness { return s.ready }

// Store returns the store served now: Options.Store, or the newer build
// swapped in since.
func (s *Starter) Store() *store.Store { return s.store.Load() }

// Open begins the start behind srv, which already answers: Live follows
// the gateway, the index loads, the gateway starts. It returns at once;
// the work goes on until ctx ends or Close. A second Open does nothing.
func (s *Starter) Open(ctx context.Context, srv Fallbacker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil || s.closed {
		return
	}
	ctx, s.cancel = context.WithCancel(ctx)
	if gw := s.opts.Gateway; gw != nil {
		// The live index re-indexes when the gateway's tools change; the
		// server follows the live index.
		s.opts.Live.Follow(ctx, gw, search.FollowOptions{StartupWait: s.opts.StartupWait})
	}
	s.goRun(func() { s.load(ctx, srv) })
	s.goRun(func() { s.track(ctx) })
	if gw := s.opts.Gateway; gw != nil {
		gw.Start(ctx)
	}
}

// goRun runs f on the start's wait group.
func (s *Starter) goRun(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// Close ends the start's work and waits for it, then closes the gateway
// and the live index with the store it serves. It is safe to call more
// than once, and without Open.
func (s *Starter) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if s.opts.Gateway != nil {
		s.opts.Gateway.Close()
	}
	return s.opts.Live.Close()
}

// track moves the Readiness to Loaded and Ready as the live index gets
// there (Settled is the load's: load).
func (s *Starter) track(ctx context.Context) {
	live := s.opts.Live
	select {
	case <-live.Loaded():
		s.ready.Advance(Loaded)
	case <-s.ready.Reached(Settled):
	case <-ctx.Done():
		return
	}
	select {
	case <-s.ready.Reached(Settled):
	case <-ctx.Done():
		return
	}
	select {
	case <-live.Ready():
		s.ready.Advance(Ready)
	case <-ctx.Done():
	}
}

// load loads the index, then starts what follows a load: the delayed
// check of the data dir and the watch for newer builds. When the index
// cannot load, it falls back or stops the server. The Readiness is
// Settled once it has.
func (s *Starter) load(ctx context.Context, srv Fallbacker) {
	defer s.ready.Advance(Settled)
	start := time.Now()
	err := s.loadIndex(ctx)
	if err == nil {
		// Settled as the live index is: what follows (logs, lookups,
		// memory given back) holds no request.
		s.ready.Advance(Settled)
	}
	if s.opts.AfterLoad != nil {
		s.opts.AfterLoad()
	}
	if err == nil {
		eng := s.opts.Live.Engine()
		cat := eng.Catalog()
		s.log.Info("index loaded", "tools", cat.Len(), "domains", len(cat.Domains()), "embedder", eng.EmbedderName(), "in", time.Since(start).Round(time.Millisecond))
		cat.PrepareLookups() // built on first use otherwise: not in a query
		if s.opts.VerifyDelay > 0 {
			s.goRun(func() { s.verifyLater(ctx) })
		}
		if s.opts.Builds.Every > 0 {
			s.goRun(func() { s.watchBuilds(ctx) })
		}
		// Loading parsed the whole catalog file and synced both
		// indexes: give that transient memory back to the system
		// instead of holding it for the server's lifetime, once the
		// first queries are answered (freeLater).
		s.goRun(func() { s.freeLater(ctx) })
		return
	}
	// With the eager fallback, a catalog that is valid but cannot be
	// indexed (a data dir that cannot be written) is still served: every
	// tool listed directly. Otherwise the server stops with the error (an
	// invalid catalog stops it either way).
	if s.opts.Fallback && ctx.Err() == nil {
		if cat, cerr := s.fallbackCatalog(); cerr == nil {
			s.opts.Live.UseCatalog(cat)
			srv.FallBackToEager("the index could not load: " + err.Error())
			return
		}
	}
	if s.opts.Stop != nil {
		s.opts.Stop(err)
	}
}

// loadIndex picks the embedder and loads the live index.
func (s *Starter) loadIndex(ctx context.Context) error {
	emb, err := s.opts.Embedder()
	if err != nil {
		return err
	}
	update, finish := func(int, int) {}, func() {}
	if s.opts.Progress != nil {
		update, finish = s.opts.Progress(emb)
	}
	// With catalog files the catalog is the store's (cached in the data
	// dir, or built from the files and saved): the live index asks it.
	_, err = s.opts.Live.Load(ctx, s.opts.Base, emb, update)
	finish()
	return err
}

// fallbackCatalog returns the catalog the store holds, or else the one
// of the catalog files' domains and the upstream servers' known ones.
func (s *Starter) fallbackCatalog() (*index.Catalog, error) {
	if s.opts.Cached != nil {
		return s.opts.Cached, nil
	}
	cat, _, err := index.NewCatalogSkipping(s.opts.Base, s.opts.Known, nil)
	return cat, err
}

// freeDelay is how long after the index has loaded its transient memory
// is given back (freeLater).
const freeDelay = time.Second

// freeLater gives the memory a load left behind back to the system
// (debug.FreeOSMemory, a full collection) freeDelay after the load, or
// not at all when ctx ends first. Not at once: the first meta-tool call
// is answered as the load settles, and at 100k tools on two cores a full
// collection of the start's heap beside it (and beside the domain index
// and name lookups it still waits for) delayed its answer.
func (s *Starter) freeLater(ctx context.Context) {
	t := time.NewTimer(freeDelay)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
		debug.FreeOSMemory()
	}
}

// verifyLater says damage in a file no start reads (another catalog's
// delta, another embedder's statistics) soon, not when it matters; its
// reader rebuilds it then. Not at once: reading every file (tens of MB
// at 100k tools) beside the first queries cost them a core.
func (s *Starter) verifyLater(ctx context.Context) {
	t := time.NewTimer(s.opts.VerifyDelay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	for _, d := range s.Store().Verify() {
		s.log.Warn("data dir: a file fails its check; it is removed and rebuilt when next used", "file", d.Path, "problem", d.Problem)
	}
	// What it read is garbage now: give it back, as after loading.
	debug.FreeOSMemory()
}
