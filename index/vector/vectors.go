package vector

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	chromem "github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/internal/fileio"
)

// DocumentEmbedder embeds documents for the vector store. embed.Embedder
// satisfies it.
type DocumentEmbedder interface {
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
}

// Store is the store of tool vectors: one collection per embedder, model
// and dimension, so switching models never mixes vectors.
//
// A collection is a snapshot: its vectors contiguous, L2-normalised, what
// queries scan and what a sync patches and writes. On disk each collection
// is one snapshot file (snapfile.go), its store of record, with a
// checksum; a start maps it and queries read the vectors in the file's
// pages, without a copy. It is replaced atomically (temporary file,
// fsync, rename) after a large change, and every few seconds while a
// long sync embeds; a small change goes into a delta file beside it, in
// the same format (see deltaFraction). Each vector is on disk once.
//
// chromem-go is the library of the in-memory collections that
// QueryChromem queries (filled from the snapshot by mirror, to measure
// chromem-go's query path against the scan) and of the migration from
// the layouts of earlier versions. Its own query path is not the
// product's: it sends every document through a channel and a lock, which
// costs more than the dot products at 10k tools (BENCHMARKS.md), and its
// collections hold a copy of every vector (260 MB at 100k tools). Its
// persistent layout (a file per document, named by 32 bits of a hash of
// its ID: at 100k tools two IDs share a file name about once) and its
// export (gob, the store of record up to the two-file format, beside a
// snapshot derived from it) are read only to migrate a data dir of an
// earlier toolscout, once (migrate.go).
type Store struct {
	db  *chromem.DB // QueryChromem's copies, and the migration's
	dir string      // "" in memory

	mu     sync.Mutex
	snaps  map[string]*snapshot
	read   map[string]bool // collections read from dir (or found missing)
	healed []string
	// readOnly: nothing is written, healed, migrated or removed;
	// unreadable says why a collection could not be read.
	readOnly   bool
	warm       bool // WarmOnRead
	unreadable map[string]error
	// unhealed names the collections a query read and found damaged (the
	// collection file, or its delta): left for the next write path
	// (readLocked with heal) to heal.
	unhealed map[string]string
	// scan is how queries scan (quant.go); scanErr says why ScanEnv's
	// value was refused (a read-only store's queries fail with it).
	scan    ScanMode
	scanErr error
	// log is where a query that finds a collection or delta it may not
	// heal says so, once per collection (SetLogger; discarded unless set).
	log *slog.Logger
}

// Open opens the vector store in dir, creating it when missing. An
// empty dir keeps the vectors in memory. Collections of an earlier
// toolscout's layout are migrated here, once each (migrate.go); the
// others load on first use.
func Open(dir string) (*Store, error) {
	v := &Store{db: chromem.NewDB(), dir: dir, snaps: map[string]*snapshot{}, read: map[string]bool{},
		unreadable: map[string]error{}, unhealed: map[string]string{}, log: slog.New(slog.DiscardHandler)}
	var err error
	if v.scan, err = scanModeFromEnv(); err != nil {
		return nil, fmt.Errorf("vector store: %w", err)
	}
	if dir == "" {
		return v, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("vector store: %w", err)
	}
	// A kill while a collection file was being written leaves its
	// temporary file behind; the previous version is still whole.
	fileio.RemoveLeftoverTemps(dir)
	if err := v.migrateLegacy(); err != nil {
		return nil, err
	}
	if err := v.migrateTwoFile(); err != nil {
		return nil, err
	}
	v.healDeltas()
	return v, nil
}

// healDeltas reads, as the store opens for writing, every collection
// with a delta file beside it, healing as the sync does (readLocked with
// heal): a delta that cannot be read is removed and said in Healed, one
// of another version of the collection file (a kill between a full write
// and the delta's removal) is removed silently, a damaged collection file
// is salvaged or removed. A delta with no collection file (a kill while
// Prune deleted the collection) is removed. Healing is the open's and the
// sync's, never a query's: after this a query finds the deltas as the
// last write left them. A collection without a delta is read, and healed,
// by its first sync (a full read of every collection here would make a
// start read the vectors of models it does not use).
func (v *Store) healDeltas() {
	files, _ := filepath.Glob(filepath.Join(v.dir, "*"+deltaSuffix+collectionExt))
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, f := range files {
		name := nameOf(f, deltaSuffix+collectionExt)
		if name == "" {
			continue
		}
		if _, err := os.Stat(v.fileOf(name)); errors.Is(err, os.ErrNotExist) {
			if err := os.Remove(f); err == nil {
				v.healed = append(v.healed, fmt.Sprintf("vector delta %s has no collection file beside it (a kill while the collection was deleted); removed", f))
			}
			continue
		}
		v.readLocked(name, true)
	}
}

// SetLogger sets where a query that reads a damaged collection or delta
// says so (once per collection): it serves what it could read and
// leaves the files for the next open or index to heal.
func (v *Store) SetLogger(l *slog.Logger) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.log = l
}

// OpenReadOnly opens the vector store in dir (missing or not)
// without writing there: collections are read, never migrated, written
// or healed, and Sync fails with ErrReadOnly unless a collection already
// holds the catalog's vectors.
func OpenReadOnly(dir string) *Store {
	v := &Store{db: chromem.NewDB(), dir: dir, snaps: map[string]*snapshot{}, read: map[string]bool{},
		readOnly: true, unreadable: map[string]error{}, unhealed: map[string]string{}, log: slog.New(slog.DiscardHandler)}
	v.scan, v.scanErr = scanModeFromEnv()
	return v
}

// WarmOnRead makes the store compute each collection's domain centroids
// (and their fixed order, domainTable) as the collection is read from its file, beside the rest of a start,
// for a process whose first query should not wait for them (serve): from
// the domain sums the file holds, or, for a collection with a delta or a
// file of an earlier format, a pass over every vector (about 100 ms of
// CPU at 100k tools) that the first query otherwise makes. A re-index,
// which asks no query, does without (WarmOnRead costs it that CPU).
func (v *Store) WarmOnRead() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.warm = true
	// Those the open read (healDeltas) warm now.
	for _, s := range v.snaps {
		if s != nil {
			go s.domainTable()
		}
	}
}

// Healed says, one line each, what could not be read and was removed to
// be embedded again, and which collections Open migrated from an earlier
// toolscout's layout ("vectors: migrating ..."). Callers log them as
// warnings.
func (v *Store) Healed() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.healed)
}

// collectionExt ends the name of a collection file.
const collectionExt = ".snap"

// fileOf is the file of the named collection: the name in URL-safe
// base64, so that any model name makes a valid, reversible file name.
func (v *Store) fileOf(name string) string {
	return filepath.Join(v.dir, base64.RawURLEncoding.EncodeToString([]byte(name))+collectionExt)
}

// nameOf is the collection name of a file in the store ending in ext, or
// "" (a delta's name, X.delta, is not base64).
func nameOf(file, ext string) string {
	base, ok := strings.CutSuffix(filepath.Base(file), ext)
	if !ok {
		return ""
	}
	name, err := base64.RawURLEncoding.DecodeString(base)
	if err != nil {
		return ""
	}
	return string(name)
}

// readLocked reads the named collection's snapshot file (and its delta)
// from dir into v.snaps the first time it is used. With heal (Sync:
// the write path) a file damaged only in its matrix is written again
// without the rows there (salvageLocked); one that cannot be read
// otherwise is removed. Either way its lost tools are embedded again by
// the next Sync, and Healed says so. Without heal (a query: queries never
// write files) or read-only, the file is left and unreadable says why:
// queries of the collection fail with it, and the next write path reads
// the file again and heals it. A damaged delta is left too, the base
// served alone meanwhile. v.mu is held.
func (v *Store) readLocked(name string, heal bool) {
	if v.dir == "" {
		return
	}
	if v.read[name] {
		if !heal || v.readOnly || v.unhealed[name] == "" {
			return
		}
		// A query read it and left what needs healing: heal it now.
		delete(v.unhealed, name)
		delete(v.unreadable, name)
		delete(v.snaps, name)
	}
	v.read[name] = true
	path := v.fileOf(name)
	base, _, _, err := readSnap(path)
	if err != nil && v.readOnly {
		// Not migrated: that takes a writer.
		if _, serr := os.Stat(twoFileOf(path)); serr == nil {
			v.unreadable[name] = fmt.Errorf("vector collection %s is in the two-file format of an earlier toolscout (%s beside it), which is migrated when the data dir is opened for writing: run toolscout index once",
				path, filepath.Base(twoFileOf(path)))
			return
		}
	}
	switch {
	case err == nil:
		s := v.withDeltaFile(name, base, heal)
		if base.format != "" {
			s = v.rewriteV5Locked(name, path, s, heal)
		}
		v.snaps[name] = s
		if v.warm {
			go s.domainTable()
		}
		return
	case errors.Is(err, os.ErrNotExist):
		return // not written yet
	case v.readOnly:
		v.unreadable[name] = fmt.Errorf("vector collection %s could not be read: %w", path, err)
		v.log.Warn("vector collection could not be read; searches rank by keyword, the file is left for a writer to heal", "file", path, "err", err)
		return
	case !heal:
		v.unreadable[name] = fmt.Errorf("vector collection %s could not be read (%w); left as it is until the next index or re-index, which heals it", path, err)
		v.unhealed[name] = "collection"
		v.log.Warn("vector collection could not be read; searches rank by keyword, the file is left as it is (queries never write) until the next index heals it", "file", path, "err", err)
		return
	}
	if v.salvageLocked(name, path, err) {
		return
	}
	os.Remove(path)
	v.removeDelta(name)
	v.healed = append(v.healed, fmt.Sprintf("vector collection %s could not be read (%v); removed, its tools are embedded again", path, err))
}

// rewriteV5Locked handles a collection read from a file of an earlier
// format: before the quantized rows (snapV5), quantized in memory as it
// was read, or with a float32 matrix (snapV6), read in place:
// the write path (heal, not read-only) writes it again in the current
// format, its delta merged in, and says so in Healed; a query leaves the
// file and says once in the log that the next index writes it. It
// returns the snapshot to serve. v.mu is held.
func (v *Store) rewriteV5Locked(name, path string, s *snapshot, heal bool) *snapshot {
	if !heal || v.readOnly {
		v.log.Info("vector collection is in the format of an earlier toolscout ("+oldFormat(s.format)+"): served as read; the next toolscout index writes it in the current format", "file", path)
		if !v.readOnly {
			v.unhealed[name] = "format" // the next write path writes it
		}
		return s
	}
	full, err := v.persist(name, patchSnapshot(s, s.dims, nil, nil))
	if err != nil {
		v.healed = append(v.healed, fmt.Sprintf("vector collection %s is in the format of an earlier toolscout (%s) and could not be written in the current one (%v); served as read", path, oldFormat(s.format), err))
		return s
	}
	v.healed = append(v.healed, fmt.Sprintf("vector collection %s was in the format of an earlier toolscout (%s); written again in the current format (%s)", path, oldFormat(s.format), snapMagic))
	return full
}

// oldFormat says what an earlier snapshot format (its magic) lacked.
func oldFormat(magic string) string {
	switch magic {
	case snapV5:
		return snapV5 + ", without quantized rows: quantized in memory as it was read"
	case snapV7:
		return snapV7 + ", without the domain sums: the domains' centroids computed from its rows"
	}
	return magic + ", float32 vectors: twice the bytes of the current float16"
}

// salvageLocked heals a snapshot file whose checksum failed (err) only in
// chunks of its matrix (salvageSnap): it writes the collection again
// without the rows those chunks held, its delta merged in, and says so in
// Healed; the next Sync embeds those tools again. It reports whether it
// did. v.mu is held.
func (v *Store) salvageLocked(name, path string, err error) bool {
	data, rerr := fileio.ReadMapped(path)
	if rerr != nil {
		return false
	}
	s, _, _, lost, ok := salvageSnap(data)
	if !ok {
		return false
	}
	full := patchSnapshot(v.withDeltaFile(name, s, true), s.dims, nil, nil)
	if full, rerr = v.persist(name, full); rerr != nil {
		return false
	}
	v.snaps[name] = full
	if lost == 0 {
		v.healed = append(v.healed, fmt.Sprintf("vector collection %s could not be read whole (%v): only its quantized rows were damaged; computed again from its vectors and written again", path, err))
		return true
	}
	v.healed = append(v.healed, fmt.Sprintf("vector collection %s could not be read whole (%v): only the vectors of %d tools were damaged; written again without them, those are embedded again", path, err, lost))
	return true
}

// Collection identifies the vectors of one embedder, model and dimension.
type Collection struct {
	Provider string // "ollama", "builtin"
	Model    string
	Dims     int
}

func firstN(s []string, n int) []string { return s[:min(n, len(s))] }

// Name is the chromem-go collection name.
func (c Collection) Name() string {
	return c.Provider + ":" + c.Model + ":" + strconv.Itoa(c.Dims)
}

// noEmbed is the embedding func given to chromem: every document and query
// brings its own vector, and without a func chromem would fall back to
// OpenAI.
func noEmbed(context.Context, string) ([]float32, error) {
	return nil, errors.New("toolscout supplies every embedding; chromem must not embed")
}

// Count returns the number of vectors in the named collection.
func (v *Store) Count(col Collection) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	s, err := v.snapshotLocked(context.Background(), col.Name(), false)
	if err != nil || s == nil {
		return 0
	}
	return s.count()
}

// Prune deletes the collections of provider other than keep, and returns
// their names. The built-in embedder's collections are named after its
// lexicon fingerprint, so each lexicon change would otherwise leave one
// behind.
func (v *Store) Prune(provider string, keep Collection) ([]string, error) {
	if v.readOnly {
		return nil, nil // other processes may use them
	}
	names := map[string]bool{}
	v.mu.Lock()
	for name, snap := range v.snaps {
		if snap != nil {
			names[name] = true
		}
	}
	v.mu.Unlock()
	if v.dir != "" {
		files, _ := filepath.Glob(filepath.Join(v.dir, "*"+collectionExt))
		for _, f := range files {
			if name := nameOf(f, collectionExt); name != "" {
				names[name] = true
			}
		}
	}
	var gone []string
	for name := range names {
		if !strings.HasPrefix(name, provider+":") || name == keep.Name() {
			continue
		}
		if err := v.db.DeleteCollection(name); err != nil {
			return gone, fmt.Errorf("delete vector collection %s: %w", name, err)
		}
		if v.dir != "" {
			if err := os.Remove(v.fileOf(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return gone, fmt.Errorf("delete vector collection %s: %w", name, err)
			}
			if err := v.removeDelta(name); err != nil {
				return gone, fmt.Errorf("delete vector collection %s: %w", name, err)
			}
		}
		gone = append(gone, name)
	}
	sort.Strings(gone)
	v.mu.Lock()
	for _, name := range gone {
		delete(v.snaps, name)
		v.read[name] = true // deleted: nothing to read
	}
	v.mu.Unlock()
	return gone, nil
}
