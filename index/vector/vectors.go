package vector

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
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

// Store is the chromem-go store of tool vectors: one collection per
// embedder, model and dimension, so switching models never mixes vectors.
//
// chromem-go's export format is the store of record. On disk each
// collection is one file of chromem-go exports (see writeExport), replaced
// atomically (temporary file, fsync, rename) after a large change, and
// every few seconds while a long sync embeds; a small change goes into a
// delta file beside it, in the same format (see deltaFraction).
// chromem-go's own persistent layout (a file per document, named by 32
// bits of a hash of its ID) is not used: at 100k tools two IDs share a
// file name about once (each start then re-embeds them and one is always
// missing), 100k small files open slowly, and a kill mid-write leaves a
// cut file. Data dirs in that layout are migrated on open.
//
// In memory a collection is a snapshot: its vectors contiguous, what
// queries scan, and what a sync patches and writes. Beside each file a
// snapshot file holds the same, so a start maps it instead of decoding the
// export. chromem-go's in-memory collections are not kept: a copy of
// every vector that nothing reads (260 MB at 100k tools, which raised the
// peak memory of a cold index by more); its own query path sends every
// document through a channel and a lock, which costs more than the dot
// products at 10k tools (BENCHMARKS.md). QueryChromem fills one from the
// snapshot to measure the two.
type Store struct {
	db  *chromem.DB // QueryChromem's copies, and the migration's
	dir string      // "" in memory

	mu       sync.Mutex
	snaps    map[string]*snapshot
	read     map[string]bool // collections read from dir (or found missing)
	imported map[string]bool // ... through their export, not their snapshot file
	healed   []string
	// readOnly: nothing is written, healed or removed; unreadable says
	// why a collection could not be read.
	readOnly   bool
	unreadable map[string]error
}

// Open opens the vector store in dir, creating it when missing. An
// empty dir keeps the vectors in memory. Collections load on first use.
func Open(dir string) (*Store, error) {
	v := &Store{db: chromem.NewDB(), dir: dir, snaps: map[string]*snapshot{}, read: map[string]bool{}, imported: map[string]bool{}}
	if dir == "" {
		return v, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("vector store: %w", err)
	}
	if err := v.migrateLegacy(); err != nil {
		return nil, err
	}
	// A kill while a collection file was being written leaves its
	// temporary file behind; the previous version is still whole.
	fileio.RemoveLeftoverTemps(dir)
	return v, nil
}

// OpenReadOnly opens the vector store in dir (missing or not)
// without writing there: collections are read, never migrated, written
// or healed, and Sync fails with ErrReadOnly unless a collection already
// holds the catalog's vectors.
func OpenReadOnly(dir string) *Store {
	return &Store{db: chromem.NewDB(), dir: dir, snaps: map[string]*snapshot{}, read: map[string]bool{}, imported: map[string]bool{},
		readOnly: true, unreadable: map[string]error{}}
}

// Healed says, one line each, what could not be read and was removed to
// be embedded again.
func (v *Store) Healed() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.healed)
}

// collectionExt ends the name of a collection file.
const collectionExt = ".gob"

// fileOf is the file of the named collection: the name in URL-safe
// base64, so that any model name makes a valid, reversible file name.
func (v *Store) fileOf(name string) string {
	return filepath.Join(v.dir, base64.RawURLEncoding.EncodeToString([]byte(name))+collectionExt)
}

// nameOf is the collection name of a file in the store, or "".
func nameOf(file string) string {
	base, ok := strings.CutSuffix(filepath.Base(file), collectionExt)
	if !ok {
		return ""
	}
	name, err := base64.RawURLEncoding.DecodeString(base)
	if err != nil {
		return ""
	}
	return string(name)
}

// readLocked reads the named collection from dir into v.snaps the first
// time it is used: the snapshot file (and the delta's) when it is whole
// and matches the collection file, else the collection file's exports,
// from which the snapshot file is written again. A snapshot file that is
// damaged or of an earlier format is said in Healed; one that is missing
// or stale (a kill between the two writes, a copy without times) is not.
// A collection file that cannot be read is removed (its tools are
// embedded again) and said in Healed; one written before checksums is
// written again with them, its delta merged in, and said in Healed. v.mu
// is held.
func (v *Store) readLocked(name string) {
	if v.dir == "" || v.read[name] {
		return
	}
	v.read[name] = true
	path := v.fileOf(name)
	base, _, _, serr := readSnap(path)
	if serr == nil {
		v.snaps[name] = v.withDeltaFile(name, base, false)
		return
	}
	if _, err := os.Stat(path); err != nil {
		return // not written yet
	}
	v.imported[name] = true
	docs, _, sealed, err := readExport(path, name)
	if err == nil {
		base, err = snapshotOf(docs, dimsOf(name))
	}
	if err != nil && v.readOnly {
		v.unreadable[name] = fmt.Errorf("vector collection %s could not be read: %w", path, err)
		return
	}
	if err != nil {
		os.Remove(path)
		os.Remove(snapPathOf(path))
		v.removeDelta(name)
		v.healed = append(v.healed, fmt.Sprintf("vector collection %s could not be read (%v); removed, its tools are embedded again", path, err))
		return
	}
	if !sealed {
		// One layer: persist writes the snapshot file from it.
		s := patchSnapshot(v.withDeltaFile(name, base, true), dimsOf(name), nil, nil)
		if v.readOnly {
			v.snaps[name] = s
			return
		}
		msg := fmt.Sprintf("vector collection %s was written by an earlier toolscout, without checksums; written again with them", path)
		if _, err := v.persist(name, s); err != nil {
			msg = fmt.Sprintf("vector collection %s was written by an earlier toolscout, without checksums, and could not be written again (%v)", path, err)
		}
		v.healed = append(v.healed, msg)
		v.snaps[name] = s
		return
	}
	if !v.readOnly {
		writeSnap(path, base, nil, fileTag{})
	}
	if snapDamaged(serr) {
		v.healed = append(v.healed, fmt.Sprintf("vector snapshot %s could not be read (%v); rebuilt from %s", snapPathOf(path), serr, filepath.Base(path)))
	}
	v.snaps[name] = v.withDeltaFile(name, base, false)
}

// snapDamaged reports whether readSnap's error is worth a warning: not a
// missing or stale snapshot, which a kill between two writes or a copy
// without times leaves, but damage or an earlier format.
func snapDamaged(err error) bool {
	return err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, errStaleSnap)
}

// snapshotOf returns a one-layer snapshot of chromem-go documents.
func snapshotOf(docs []chromem.Document, dims int) (*snapshot, error) {
	rows := make([]snapRow, len(docs))
	for i, d := range docs {
		if len(d.Embedding) != dims {
			return nil, fmt.Errorf("%s has %d dimensions, want %d", d.ID, len(d.Embedding), dims)
		}
		rows[i] = snapRow{id: d.ID, hash: d.Metadata["hash"], domain: d.Metadata["domain"], group: d.Metadata["group"], vec: normalized(d.Embedding)}
	}
	return flat(dims, rows), nil
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
	s, err := v.snapshotLocked(context.Background(), col.Name())
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
			if name := nameOf(f); name != "" {
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
			for _, f := range []string{v.fileOf(name), snapPathOf(v.fileOf(name))} {
				if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
					return gone, fmt.Errorf("delete vector collection %s: %w", name, err)
				}
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
