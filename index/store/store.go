package store

import (
	"context"
	"errors"
	"fmt"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword"
	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/fileio"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Store is the on-disk (or in-memory) home of both indexes.
type Store struct {
	Keyword *keyword.Index
	Vectors *vector.Store
	// MemoryKeyword is true when the on-disk keyword index was in use by
	// another process and this store keeps its own in memory.
	MemoryKeyword bool
	dir           string
	// dataDir is the data dir of a store opened as a catalog set's
	// folder (Options.Set), for Prune; "" otherwise.
	dataDir string
	healed  []string // what CachedCatalog removed
	// read are the files CachedCatalog read whole and found sound in
	// this process: Verify has no need to read them again.
	readMu   sync.Mutex
	read     map[string]bool
	readOnly bool
	log      *slog.Logger
	files    filesCatalog // the catalog of Options.Catalog
}

// Options configures OpenWith; the zero value opens the indexes for
// reading and writing, with no catalog files.
type Options struct {
	// ReadOnly opens a data dir that another process built (toolscout
	// index) to serve it, beside any number of other read-only
	// processes: nothing is created, written, healed or removed there,
	// and the keyword index is locked shared (keyword.OpenReadOnly). What
	// would need a write fails with ErrReadOnly: syncing to a catalog the
	// indexes do not already hold, saving a catalog or statistics.
	ReadOnly bool
	// Catalog is the catalog files the store's catalog comes from
	// (Store.Catalog): cached in the data dir, or built from them and
	// saved there. Nil for none: the caller builds its catalog itself
	// (from upstream servers). When the cache has it, the store drops
	// the files' bytes (CatalogSource.Drop): they are not needed again.
	Catalog *index.CatalogSource
	// Exclusive is for the process that builds the indexes for others to
	// serve (toolscout index): a keyword index another process holds is
	// an error (wrapping keyword.ErrLocked) instead of a copy kept in
	// memory (MemoryKeyword), which would index nothing for them.
	Exclusive bool
	// Stream makes a first build of the catalog files (no catalog.bin in
	// the store's folder yet) stream them into catalog.bin
	// (index.CatalogSource.StreamCatalogCache) and read the catalog back
	// from it: memory that grows with the tools' count, not with their
	// texts and schemas, for the process that builds a large catalog's
	// index (toolscout index). CatalogSpecs then gives no specs: the
	// files are read once, by Catalog.
	Stream bool
	// Logger gets the warnings of what the store does on its own (a
	// catalog it could not save, a keyword index kept in memory). Nil
	// discards them.
	Logger *slog.Logger
	// Set, when not nil, makes the dir OpenWith is given the data dir:
	// the store opens the folder of that catalog set in it (sets.go),
	// creating it with its marker and recording its sources and last
	// use; read-only, the folder must be there (else ErrNoIndex) and
	// nothing in it is created or changed. Nil: dir is the store's
	// folder itself.
	Set *Set
	// NoIndexes opens the folder for the files kept beside the indexes
	// only (Pins, Feedback): the indexes are not opened (Keyword and
	// Vectors are nil) and nothing is created, so that a command run
	// beside a server that holds them (toolscout approve, feedback)
	// neither waits for nor disturbs it. With Set the folder must be
	// there (else ErrNoIndex); an empty dir keeps the files in memory.
	NoIndexes bool
	// Cache, when not "", makes the dir OpenWith is given the data dir:
	// the store opens the folder of indexes of that name under its
	// eval/ folder, named by the caller (toolscout eval: a dataset's
	// catalog hash and an embedder; the same name, the same indexes).
	// It must be one plain file name. Not with Set.
	Cache string
	// CheckWritable makes OpenWith first check that a file can be
	// written in the data dir (created unless it is there): an error
	// wrapping ErrNotWritable when not (toolscout doctor).
	CheckWritable bool
}

// ErrNotWritable is OpenWith's error (with Options.CheckWritable) for a
// data dir in which no file can be written; the error says why.
var ErrNotWritable = errors.New("data dir not writable")

// notWritable wraps the cause of ErrNotWritable; its text is the
// cause's.
type notWritable struct{ err error }

func (e notWritable) Error() string   { return e.err.Error() }
func (e notWritable) Unwrap() []error { return []error{ErrNotWritable, e.err} }

// Set is a catalog set: the files a command was given. Each set has a
// folder of indexes of its own in the data dir (sourcesOf names it).
type Set struct {
	Catalogs []string // catalog.json files
	Configs  []string // mcpServers config files
}

// Open opens the indexes under dir (keyword.bleve and vectors/),
// creating them when missing. An empty dir keeps both in memory.
//
// When another process holds the keyword index (two clients each starting
// toolscout on the same data dir), this one keeps its keyword index in
// memory: it is rebuilt from the catalog in milliseconds, while the
// vectors, the costly part, are still shared on disk. MemoryKeyword
// reports it.
//
// A damaged index is not an error: what cannot be read is removed and
// rebuilt by the next Sync, and Healed says what. Files of earlier
// formats are migrated first (migrate.go), also said in Healed.
//
// Layout: keyword.bleve/ (Bleve, scorch) and vectors/ (one file per vector
// collection, see vector.Store).
func Open(dir string) (*Store, error) { return OpenWith(dir, Options{}) }

// Memory returns a store that keeps both indexes in memory: no data dir
// is opened, nothing is read from or written to disk. It is what eval and
// the tests index a dataset in when no data dir caches it.
func Memory() (*Store, error) { return OpenWith("", Options{}) }

// OpenWith is Open with options; read-only, dir must hold
// the indexes (else ErrNoIndex). In toolscout one function calls it,
// cmd/toolscout's openStore: every command opens its data dir the same
// way (TestOneStartUpPath).
func OpenWith(dir string, o Options) (*Store, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CheckWritable {
		if err := checkWritable(dir); err != nil {
			return nil, notWritable{err}
		}
	}
	if o.Cache != "" {
		if dir == "" || o.Set != nil || o.Cache != filepath.Base(o.Cache) || o.Cache == "." || o.Cache == ".." || strings.ContainsAny(o.Cache, `/\`) {
			return nil, fmt.Errorf("store cache %q: want one plain file name in a data dir, and no catalog set beside it", o.Cache)
		}
		dir = filepath.Join(dir, "eval", o.Cache)
	}
	dataDir := ""
	if o.Set != nil {
		var err error
		dataDir = dir
		if dir, err = setFolder(dataDir, *o.Set, o.ReadOnly || o.NoIndexes); err != nil {
			return nil, err
		}
	}
	if o.NoIndexes {
		return &Store{dir: dir, dataDir: dataDir, readOnly: o.ReadOnly, log: o.Logger}, nil
	}
	s, err := openIndexes(dir, o.ReadOnly)
	if err != nil {
		return nil, err
	}
	if dataDir != "" && !o.ReadOnly {
		// The data dir's earlier layouts (migrate.go).
		s.healed = append(migrateDataDir(dataDir), s.healed...)
	}
	s.log, s.files.src, s.dataDir = o.Logger, o.Catalog, dataDir
	s.files.streamable = o.Stream && !o.ReadOnly
	s.Vectors.SetLogger(o.Logger)
	if s.MemoryKeyword {
		if o.Exclusive {
			s.Close()
			return nil, fmt.Errorf("the keyword index in %s is in use by another toolscout process (serve, or serve --read-only replicas): stop it and run toolscout index again, or index into another --data-dir; nothing was indexed (%w)", dir, keyword.ErrLocked)
		}
		s.log.Warn("another toolscout process uses the keyword index in the data dir; this one keeps its keyword index in memory and shares the vectors", "data_dir", dir)
	}
	return s, nil
}

// openIndexes opens the indexes under dir.
func openIndexes(dir string, readOnly bool) (*Store, error) {
	if readOnly {
		return openDirReadOnly(dir)
	}
	var kwPath, vecPath string
	var healed []string
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		kwPath = filepath.Join(dir, "keyword.bleve")
		vecPath = filepath.Join(dir, "vectors")
		// A kill while catalog.bin or a fit was written leaves its
		// temporary file; the previous version is still whole.
		fileio.RemoveLeftoverTemps(dir)
		// Files of earlier formats brought to the current ones
		// (migrate.go): the readers below know only those.
		notes, err := migrate(dir, migrateHook)
		if err != nil {
			return nil, err
		}
		healed = notes
	}
	kw, err := keyword.Open(kwPath)
	memoryKeyword := false
	if errors.Is(err, keyword.ErrLocked) {
		kw, err = keyword.Open("")
		memoryKeyword = true
	}
	if err != nil {
		return nil, err
	}
	vs, err := vector.Open(vecPath)
	if err != nil {
		kw.Close()
		return nil, err
	}
	return &Store{Keyword: kw, Vectors: vs, dir: dir, MemoryKeyword: memoryKeyword, healed: healed}, nil
}

// migrateHook, when set (tests only), is called between the steps of
// the migration: a test kills the process there.
var migrateHook func(step string)

// openDirReadOnly opens the indexes under dir without writing there.
func openDirReadOnly(dir string) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: a read-only store needs a data dir", index.ErrNoIndex)
	}
	if err := checkFormat(dir); err != nil {
		return nil, err
	}
	kw, err := keyword.OpenReadOnly(filepath.Join(dir, "keyword.bleve"))
	if err != nil {
		return nil, err
	}
	vs := vector.OpenReadOnly(filepath.Join(dir, "vectors"))
	return &Store{Keyword: kw, Vectors: vs, dir: dir, readOnly: true}, nil
}

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.readOnly }

// Healed says, one line each, what could not be read and was removed to be
// rebuilt from the catalog by the next Sync (a kill during a write, a
// corrupt file). Vector collections load on first use, so ask after the
// first Sync: a query, which never writes files, leaves what it cannot
// read for the next Sync to heal. Callers log it.
func (s *Store) Healed() []string {
	if s.Keyword == nil { // Options.NoIndexes
		return slices.Clone(s.healed)
	}
	out := append(slices.Clone(s.healed), s.Keyword.Healed()...)
	return append(out, s.Vectors.Healed()...)
}

// Dir returns the data dir ("" in memory).
func (s *Store) Dir() string { return s.dir }

// Close waits for the catalog Catalog saves (WaitSaved), then closes
// the indexes.
func (s *Store) Close() error {
	s.WaitSaved()
	if s.Keyword == nil { // Options.NoIndexes
		return nil
	}
	return s.Keyword.Close()
}

// ErrNoDimension means the embedder does not know its vector size yet.
var ErrNoDimension = errors.New("embedder dimension unknown")

// Stats are the SyncStats of both indexes.
type Stats struct {
	Keyword index.SyncStats
	Vectors index.SyncStats
	// Pruned names the collections SyncOptions.Prune deleted; PruneErr
	// says why pruning failed (the sync itself did not).
	Pruned   []string
	PruneErr error
}

// Sync brings both indexes to cat: keyword first (cheap), then vectors for
// col when emb is not nil. It is SyncWith with those options.
func (s *Store) Sync(ctx context.Context, cat *index.Catalog, emb vector.DocumentEmbedder, col vector.Collection, opts vector.SyncOptions) (Stats, error) {
	return s.SyncWith(ctx, cat, SyncOptions{Embedder: emb, Collection: col, Vectors: opts})
}

// SyncOptions says how SyncWith brings the vectors along with the keyword
// index.
type SyncOptions struct {
	// Embedder embeds the documents of new and changed tools; nil syncs
	// the keyword index only. When it is a Fitter (FitSaver, FitCounter)
	// the store runs its fit on the vector path (fit.go).
	Embedder vector.DocumentEmbedder
	// Collection is where the vectors go, unless Prepare says.
	Collection vector.Collection
	// Prepare, when set, runs on the vector path, after the embedder's
	// fit (an Embedder that is a Fitter gets its statistics restored or
	// fitted first: fit.go), and returns the collection: an embedder's
	// own preparation (a check of its vector size) that must not hold
	// back the keyword index.
	Prepare func(ctx context.Context) (vector.Collection, error)
	// Vectors are the vector store's options.
	Vectors vector.SyncOptions
	// Beside syncs the vectors at the same time as the keyword index (a
	// catalog built from the previous one, with few changes: the sync
	// takes the longer of the two, not their sum); otherwise after it.
	Beside bool
	// KeywordDone, when set, is called once the keyword index holds the
	// catalog, before SyncWith waits for the vectors: the catalog can be
	// searched by keyword from then on.
	KeywordDone func()
	// Prune, once the vectors are synced, deletes the provider's other
	// collections (vectors of an embedder's older version): Stats.Pruned.
	Prune bool
}

// SyncWith brings the store to cat: the keyword index, then (or, with
// Beside, meanwhile) the vectors, as opts say. It is the one path by which
// the product and the tests write both indexes.
func (s *Store) SyncWith(ctx context.Context, cat *index.Catalog, opts SyncOptions) (Stats, error) {
	var (
		st      Stats
		vecErr  error
		vecDone chan struct{}
	)
	vectors := func(ctx context.Context) (vst index.SyncStats, err error) {
		// The embedder's statistics first (fit.go): restored, or fitted.
		fit := s.startFit(opts.Embedder, cat)
		defer func() { fit.finish(vst, err) }()
		col := opts.Collection
		if opts.Prepare != nil {
			if col, err = opts.Prepare(ctx); err != nil {
				return index.SyncStats{}, err
			}
		}
		if col.Dims <= 0 {
			return index.SyncStats{}, ErrNoDimension
		}
		vst, err = s.Vectors.Sync(ctx, col, cat, opts.Embedder, opts.Vectors)
		if err == nil && opts.Prune {
			st.Pruned, st.PruneErr = s.Vectors.Prune(col.Provider, col)
			if st.PruneErr != nil {
				s.log.Warn("could not delete old vectors", "err", st.PruneErr)
			} else if len(st.Pruned) > 0 {
				s.log.Info("deleted vectors of an older built-in lexicon", "collections", st.Pruned)
			}
		}
		return vst, err
	}
	vctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.Embedder != nil && opts.Beside {
		vecDone = make(chan struct{})
		go func() {
			defer close(vecDone)
			st.Vectors, vecErr = vectors(vctx)
		}()
	}
	kst, err := s.Keyword.Sync(ctx, cat)
	if err != nil {
		if vecDone != nil {
			cancel()
			<-vecDone
		}
		st.Keyword = kst
		return st, err
	}
	if opts.KeywordDone != nil {
		opts.KeywordDone()
	}
	if opts.Embedder == nil {
		st.Keyword = kst
		return st, nil
	}
	if vecDone != nil {
		<-vecDone
		err = vecErr
	} else {
		st.Vectors, err = vectors(ctx)
	}
	st.Keyword = kst
	return st, err
}
