package index

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	chromem "github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fault"
	"github.com/toolscout/toolscout/internal/fileio"
	"golang.org/x/sync/errgroup"
)

// DocumentEmbedder embeds documents for the vector store. embed.Embedder
// satisfies it.
type DocumentEmbedder interface {
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
}

// VectorStore is the chromem-go store of tool vectors: one collection per
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
type VectorStore struct {
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

// OpenVectors opens the vector store in dir, creating it when missing. An
// empty dir keeps the vectors in memory. Collections load on first use.
func OpenVectors(dir string) (*VectorStore, error) {
	v := &VectorStore{db: chromem.NewDB(), dir: dir, snaps: map[string]*snapshot{}, read: map[string]bool{}, imported: map[string]bool{}}
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

// openVectorsReadOnly opens the vector store in dir (missing or not)
// without writing there: collections are read, never migrated, written
// or healed, and Sync fails with ErrReadOnly unless a collection already
// holds the catalog's vectors.
func openVectorsReadOnly(dir string) *VectorStore {
	return &VectorStore{db: chromem.NewDB(), dir: dir, snaps: map[string]*snapshot{}, read: map[string]bool{}, imported: map[string]bool{},
		readOnly: true, unreadable: map[string]error{}}
}

// Healed says, one line each, what could not be read and was removed to
// be embedded again.
func (v *VectorStore) Healed() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.healed)
}

const (
	collectionExt = ".gob"
)

// fileOf is the file of the named collection: the name in URL-safe
// base64, so that any model name makes a valid, reversible file name.
func (v *VectorStore) fileOf(name string) string {
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
func (v *VectorStore) readLocked(name string) {
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

// refill creates the named chromem-go collection from a snapshot.
func refill(db *chromem.DB, name string, s *snapshot) error {
	c, err := db.CreateCollection(name, nil, noEmbed)
	if err != nil {
		return err
	}
	ctx := context.Background()
	var err2 error
	s.each(func(l *snapshot, i int) {
		if err2 == nil {
			err2 = c.AddDocument(ctx, chromem.Document{
				ID:        l.ids[i],
				Embedding: slices.Clone(l.row(i)),
				Metadata:  map[string]string{"hash": l.hash[i], "domain": l.domain.at(i), "group": l.group.at(i)},
			})
		}
	})
	return err2
}

// A delta holds what changed in a collection since its file was last
// written whole: the new and changed tools' vectors, and the IDs of the
// removed ones. A change of a few tools then writes a file of that size
// instead of the whole collection again (at 100k tools, chromem-go's
// export takes 4.8 s to write, most of it gob encoding every float).
//
// On disk: X.delta.gob, chromem-go's export of a collection named like
// the base holding the delta's documents, with the collection metadata
// "base" (the base file's size and modification time, which it applies
// to) and "removed" (a JSON array of IDs); and X.delta.snap, its snapshot
// (writeSnap, with the removed IDs and the base tag). A delta written for
// another version of the base (a kill between a full write and the
// delta's removal) is ignored and removed.
//
// A delta grows until it holds a tenth of the base's rows
// (deltaFraction); the next change then writes the collection whole and
// removes the delta.
const (
	deltaSuffix   = ".delta"
	metaBase      = "base"
	metaRemoved   = "removed"
	deltaFraction = 10
)

// deltaFileOf returns the delta file of a collection file.
func deltaFileOf(path string) string {
	return strings.TrimSuffix(path, collectionExt) + deltaSuffix + collectionExt
}

func (t fileTag) String() string { return fmt.Sprintf("%d:%d", t.size, t.mtime) }

// removeDelta removes the named collection's delta files.
func (v *VectorStore) removeDelta(name string) error {
	d := deltaFileOf(v.fileOf(name))
	for _, f := range []string{d, snapPathOf(d)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// withDeltaFile returns base with the named collection's delta applied,
// or base when there is none. The delta's snapshot is read when it is
// whole and matches its .gob, else the .gob, and the snapshot written
// again (said in Healed when it was damaged). A .gob without a checksum
// is taken only when unsealed is true: the caller writes the collection
// whole, the delta merged in. v.mu is held.
func (v *VectorStore) withDeltaFile(name string, base *snapshot, unsealed bool) *snapshot {
	path := v.fileOf(name)
	dpath := deltaFileOf(path)
	if _, err := os.Stat(dpath); err != nil {
		return base
	}
	bt, err := tagOf(path)
	if err != nil {
		return base
	}
	top, removed, forBase, serr := readSnap(dpath)
	err = serr
	if serr != nil {
		// A kill between the delta's two writes: its .gob is whole.
		var sealed bool
		top, removed, forBase, sealed, err = readDeltaGob(dpath, name)
		switch {
		case err != nil || forBase != bt:
		case !sealed && !unsealed:
			err = errors.New("written by an earlier toolscout, without a checksum")
		case sealed && !v.readOnly:
			writeSnap(dpath, top, removed, forBase)
			if snapDamaged(serr) {
				v.healed = append(v.healed, fmt.Sprintf("vector delta snapshot %s could not be read (%v); rebuilt from %s", snapPathOf(dpath), serr, filepath.Base(dpath)))
			}
		}
	}
	if (err != nil || forBase != bt) && v.readOnly {
		// The base alone, which lacks what the delta held: Sync says so.
		return base
	}
	if err != nil || forBase != bt {
		// Unreadable, or written for another version of the base: the
		// base alone. The tools the delta held are embedded again.
		v.removeDelta(name)
		if err != nil {
			v.healed = append(v.healed, fmt.Sprintf("vector delta %s could not be read (%v); removed, its tools are embedded again", dpath, err))
		}
		return base
	}
	fresh := make([]snapRow, len(top.ids))
	for i := range top.ids {
		fresh[i] = top.rowOf(i)
	}
	return base.withDelta(removed, fresh)
}

// chromemExport is chromem-go's export format (ExportToWriter, plain
// gob): decoding into structs with the same field names reads it the way
// chromem-go does, and gives the collection metadata, which chromem-go
// keeps to itself once imported.
type chromemExport struct {
	Collections map[string]*struct {
		Name      string
		Metadata  map[string]string
		Documents map[string]*chromemDoc
	}
}

// readDeltaGob reads a delta's .gob: its rows, removed IDs and base tag,
// and whether it carried a checksum (readExport).
func readDeltaGob(dpath, name string) (top *snapshot, removed []string, bt fileTag, sealed bool, err error) {
	docs, meta, sealed, err := readExport(dpath, name)
	if err != nil {
		return nil, nil, bt, false, err
	}
	if _, err := fmt.Sscanf(meta[metaBase], "%d:%d", &bt.size, &bt.mtime); err != nil {
		return nil, nil, bt, false, fmt.Errorf("delta without a base tag: %w", err)
	}
	if r := meta[metaRemoved]; r != "" {
		if err := json.Unmarshal([]byte(r), &removed); err != nil {
			return nil, nil, bt, false, fmt.Errorf("delta removed list: %w", err)
		}
	}
	top, err = snapshotOf(docs, dimsOf(name))
	return top, removed, bt, sealed, err
}

// exportRows is the number of documents per chromem-go export in a
// collection file. chromem-go's export encodes a whole collection into one
// buffer before writing it; the buffer grows by a quarter at a time, so
// at 100k tools (178 MB) writing took 4.6 s and about 1 GB of fresh
// memory, most of it copying. In parts of 4,096 documents the buffers
// stay small and are reused.
const exportRows = 4096

// writeExport writes rows (sorted by ID) as chromem-go exports of the
// named collection, one per exportRows documents (one, empty, when there
// are none), each with the collection metadata meta, then the checksum:
// one more export, without documents, whose metadata metaCRC is the
// CRC-32C of the exports before it. The exports follow one another in the
// file; readExport reads them back and checks the checksum. gob encodes
// every float with a call of its own (2.5 s for 100k × 512 on one core),
// so the parts are encoded on all cores, a few at a time, and written in
// order.
func writeExport(w io.Writer, name string, meta map[string]string, rows []snapRow) error {
	var parts [][]snapRow
	for lo := 0; lo == 0 || lo < len(rows); lo += exportRows {
		parts = append(parts, rows[lo:min(lo+exportRows, len(rows))])
	}
	cw := checksum.NewWriter(w)
	wave := runtime.GOMAXPROCS(0)
	for start := 0; start < len(parts); start += wave {
		bufs := make([]bytes.Buffer, min(wave, len(parts)-start))
		var g errgroup.Group
		for i := range bufs {
			g.Go(func() error { return exportPart(&bufs[i], name, meta, parts[start+i]) })
		}
		if err := g.Wait(); err != nil {
			return err
		}
		for i := range bufs {
			if _, err := bufs[i].WriteTo(cw); err != nil {
				return err
			}
		}
	}
	return exportPart(w, name, map[string]string{metaCRC: fmt.Sprintf("%08x", cw.Sum())}, nil)
}

// metaCRC is the collection metadata of the last export of a file
// (writeExport): the CRC-32C of the exports before it, in hex. chromem-go
// reads the first export of a file and ignores the rest, and toolscout
// before checksums read it as an export without documents.
const metaCRC = "toolscout_crc32c"

// exportPart writes rows as one chromem-go export of the named collection.
func exportPart(w io.Writer, name string, meta map[string]string, rows []snapRow) error {
	db := chromem.NewDB()
	c, err := db.CreateCollection(name, meta, noEmbed)
	if err != nil {
		return err
	}
	docs := make([]chromem.Document, len(rows))
	for i, r := range rows {
		// The rows are normalised: chromem-go keeps the slice as is.
		docs[i] = chromem.Document{ID: r.id, Embedding: r.vec, Metadata: map[string]string{"hash": r.hash, "domain": r.domain, "group": r.group}}
	}
	if len(docs) > 0 {
		if err := c.AddDocuments(context.Background(), docs, 1); err != nil {
			return err
		}
	}
	return db.ExportToWriter(w, false, "", name)
}

// readExport reads the named collection from a file of one or more
// chromem-go exports (writeExport; earlier data dirs hold one): its
// documents, and the collection metadata of the first export. A file
// whose checksum does not match is an error (checksum.ErrMismatch); one without a
// checksum (written before toolscout had them) is read as it is, and
// sealed is false.
func readExport(path, name string) (docs []chromem.Document, meta map[string]string, sealed bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	// gob reads exactly one export from a reader that is an
	// io.ByteReader, so each export gets a decoder of its own.
	br := bufio.NewReaderSize(f, 1<<20)
	cr := checksum.NewReader(br)
	err = fault.Guard("read "+path, func() error {
		for first := true; ; first = false {
			if _, err := br.Peek(1); err == io.EOF && !first {
				return nil
			}
			if sealed {
				return errors.New("data after the checksum")
			}
			before := cr.Sum()
			var exp chromemExport
			if err := gob.NewDecoder(cr).Decode(&exp); err != nil {
				return err
			}
			c := exp.Collections[name]
			if c == nil {
				return fmt.Errorf("collection %q is not in the file", name)
			}
			if sum, ok := c.Metadata[metaCRC]; ok && !first {
				if sum != fmt.Sprintf("%08x", before) {
					return checksum.ErrMismatch
				}
				sealed = true
				continue
			}
			if first {
				meta = c.Metadata
			}
			for _, d := range c.Documents {
				docs = append(docs, chromem.Document{ID: d.ID, Metadata: d.Metadata, Embedding: d.Embedding, Content: d.Content})
			}
		}
	})
	if err != nil {
		return nil, nil, false, err
	}
	return docs, meta, sealed, nil
}

// persistDelta writes s's delta layer as the named collection's delta
// files (.gob, then .snap; each a temporary file, synced, renamed).
func (v *VectorStore) persistDelta(name string, s *snapshot) error {
	path := v.fileOf(name)
	dpath := deltaFileOf(path)
	bt, err := tagOf(path)
	if err != nil {
		return fmt.Errorf("write vector delta %s: %w", dpath, err)
	}
	removed := s.removed()
	raw, err := json.Marshal(removed)
	if err != nil {
		return err
	}
	rows := make([]snapRow, len(s.top.ids))
	for i := range rows {
		rows[i] = s.top.rowOf(i)
	}
	meta := map[string]string{metaBase: bt.String(), metaRemoved: string(raw)}
	err = fileio.WriteAtomic(dpath, func(w *bufio.Writer) error { return writeExport(w, name, meta, rows) })
	if err == nil {
		err = writeSnap(dpath, s.top, removed, bt)
	}
	if err != nil {
		return fmt.Errorf("write vector delta %s: %w", dpath, err)
	}
	fileio.SyncDir(v.dir)
	return nil
}

// persist writes the named collection's file whole: a temporary file,
// synced, then renamed over the old one, so that a kill leaves either
// version whole; then its snapshot, and removes the delta it now holds.
// s is one layer (no delta). Callers make sure no write to the
// collection runs meanwhile.
func (v *VectorStore) persist(name string, s *snapshot) (*snapshot, error) {
	if v.dir == "" {
		return nil, nil
	}
	path := v.fileOf(name)
	var err error
	if s == nil { // the migration's chromem-go collection
		if s, err = buildSnapshot(context.Background(), v.db.GetCollection(name, noEmbed), dimsOf(name)); err != nil {
			return nil, fmt.Errorf("write vector collection %s: %w", name, err)
		}
	}
	// The export is written from the snapshot: a patched one holds what a
	// whole sync would (TestPatchedSnapshotMatchesTheCollection).
	var rows []snapRow
	if s != nil {
		rows = make([]snapRow, 0, s.count())
		s.each(func(l *snapshot, i int) { rows = append(rows, l.rowOf(i)) })
	}
	err = fileio.WriteAtomic(path, func(w *bufio.Writer) error { return writeExport(w, name, nil, rows) })
	if err != nil {
		return nil, fmt.Errorf("write vector collection %s: %w", name, err)
	}
	// The snapshot file goes second: if a kill comes between the two, the
	// snapshot no longer matches the .gob and is rebuilt from it; the
	// delta names the old .gob and is ignored.
	if s != nil {
		err = writeSnap(path, s, nil, fileTag{})
	}
	if err == nil {
		err = v.removeDelta(name)
	}
	if err != nil {
		return nil, fmt.Errorf("write vector snapshot %s: %w", name, err)
	}
	fileio.SyncDir(v.dir)
	return s, nil
}

// migrateLegacy moves collections from chromem-go's file-per-document
// layout (one folder per collection) into one file each, then removes the
// folders. What cannot be read is healed as before (healVectorDir).
func (v *VectorStore) migrateLegacy() error {
	entries, err := os.ReadDir(v.dir)
	if err != nil {
		return fmt.Errorf("vector store: %w", err)
	}
	var folders []string
	for _, e := range entries {
		if e.IsDir() {
			folders = append(folders, filepath.Join(v.dir, e.Name()))
		}
	}
	if len(folders) == 0 {
		return nil
	}
	old, err := openChromem(v.dir)
	if err != nil {
		removed, herr := healVectorDir(v.dir)
		if herr == nil {
			old, err = openChromem(v.dir)
		}
		if err == nil {
			v.healed = append(v.healed, fmt.Sprintf("vector store %s could not be read; removed %d damaged files (%s), their tools are embedded again", v.dir, len(removed), strings.Join(firstN(removed, 3), ", ")))
		}
	}
	if err == nil {
		for name := range old.ListCollections() {
			if !v.read[name] {
				f, err := os.CreateTemp(v.dir, "migrate"+fileio.TmpSuffix+"*")
				if err != nil {
					return fmt.Errorf("vector store: %w", err)
				}
				err = old.ExportToWriter(f, false, "", name)
				f.Close()
				if err == nil {
					err = v.db.ImportFromFile(f.Name(), "", name)
				}
				os.Remove(f.Name())
				if err != nil {
					return fmt.Errorf("migrate vector collection %s: %w", name, err)
				}
				v.read[name] = true
				s, err := v.persist(name, nil)
				v.db.DeleteCollection(name)
				if err != nil {
					return err
				}
				v.snaps[name] = s
			}
		}
	} else {
		v.healed = append(v.healed, fmt.Sprintf("vector store %s could not be read (%v); started over, every tool is embedded again", v.dir, err))
	}
	for _, f := range folders {
		if err := os.RemoveAll(f); err != nil {
			return fmt.Errorf("vector store: remove the old layout %s: %w", f, err)
		}
	}
	return nil
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

// mirror returns a chromem-go collection filled from the named
// collection's snapshot, for QueryChromem; nil when it is empty.
func (v *VectorStore) mirror(ctx context.Context, name string) (*chromem.Collection, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if c := v.db.GetCollection(name, noEmbed); c != nil {
		return c, nil
	}
	snap, err := v.snapshotLocked(ctx, name)
	if err != nil || snap == nil {
		return nil, err
	}
	if err := refill(v.db, name, snap); err != nil {
		v.db.DeleteCollection(name)
		return nil, err
	}
	return v.db.GetCollection(name, noEmbed), nil
}

// Count returns the number of vectors in the named collection.
func (v *VectorStore) Count(col Collection) int {
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
func (v *VectorStore) Prune(provider string, keep Collection) ([]string, error) {
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

// checkpointEvery is how often a long Sync writes the collection's file
// while it embeds.
const checkpointEvery = 15 * time.Second

// VectorSyncOptions tunes VectorStore.Sync.
type VectorSyncOptions struct {
	// BatchSize is the number of texts per embedding call (32 when zero).
	BatchSize int
	// Concurrency bounds the embedding calls in flight (2 when zero).
	Concurrency int
	// Progress, when set, is called after each batch with the number of
	// tools embedded so far and the number to embed in all.
	Progress func(done, total int)
}

// Sync makes the collection hold a vector for exactly cat's tools. Tools
// whose content hash is unchanged are not re-embedded; removed tools are
// deleted. Embedding runs in batches with bounded concurrency and stops at
// the first error; the vectors written before it stay valid, so the next
// Sync resumes where this one stopped.
func (v *VectorStore) Sync(ctx context.Context, col Collection, cat *Catalog, emb DocumentEmbedder, opts VectorSyncOptions) (st SyncStats, err error) {
	if col.Dims <= 0 {
		return st, fmt.Errorf("vector collection %s: dimension unknown", col.Name())
	}
	v.mu.Lock()
	old, err := v.snapshotLocked(ctx, col.Name())
	v.mu.Unlock()
	if err != nil {
		return st, err
	}
	existing := map[string]string{}
	if old != nil {
		old.each(func(l *snapshot, i int) { existing[l.ids[i]] = l.hash[i] })
	}
	var todo []*Tool
	for _, t := range cat.Tools() {
		h, ok := existing[t.QualifiedName]
		switch {
		case !ok:
			st.Added++
			todo = append(todo, t)
		case h != t.Hash:
			st.Changed++
			todo = append(todo, t)
		default:
			st.Unchanged++
		}
	}
	var removed []string
	for id := range existing {
		if cat.Tool(id) == nil {
			removed = append(removed, id)
		}
	}
	if len(todo) == 0 && len(removed) == 0 {
		return st, nil
	}
	if v.readOnly {
		v.mu.Lock()
		why := v.unreadable[col.Name()]
		v.mu.Unlock()
		if why == nil {
			why = fmt.Errorf("it lacks %d of the catalog's tools and holds %d others", len(todo), len(removed))
		}
		return st, fmt.Errorf("vectors of %s: %w: %w; build them with toolscout index and the same embedder", col.Name(), ErrReadOnly, why)
	}
	name := col.Name()
	// A small change goes into the collection's delta (see deltaFraction);
	// a large one, or a first write, rewrites the collection whole.
	useDelta := false
	if v.dir != "" && old != nil && len(old.ids) > 0 {
		if _, err := os.Stat(v.fileOf(name)); err == nil {
			size := len(old.removed()) + len(todo) + len(removed)
			if old.top != nil {
				size += len(old.top.ids)
			}
			useDelta = size <= len(old.ids)/deltaFraction
		}
	}
	// Every change ends in the collection's files, an error included: the
	// vectors embedded before it stay, and the next Sync resumes there.
	// The new snapshot is the old one patched: removed and re-embedded
	// rows out, the new rows in (no full read of the collection).
	dirty := false
	var fresh []snapRow
	var mat []float32 // the fresh rows' vectors, in todo's order
	save := func() (*snapshot, error) {
		if !useDelta {
			var s *snapshot
			if (old == nil || old.count() == 0) && len(fresh) == len(todo) && len(todo) > 0 {
				s = &snapshot{dims: col.Dims, mat: mat, ids: make([]string, len(todo)), hash: make([]string, len(todo))}
				for i, t := range todo {
					s.ids[i], s.hash[i] = t.QualifiedName, t.Hash
					s.domain.add(t.Domain)
					s.group.add(t.Group)
				}
			} else {
				s = patchSnapshot(old, col.Dims, removed, fresh)
			}
			_, err := v.persist(name, s)
			return s, err
		}
		s := old.withDelta(removed, fresh)
		return s, v.persistDelta(name, s)
	}
	defer func() {
		if !dirty {
			return
		}
		s, perr := save()
		if perr != nil && err == nil {
			err = perr
		}
		v.mu.Lock()
		v.snaps[name] = s
		v.db.DeleteCollection(name) // QueryChromem's copy is stale
		v.mu.Unlock()
	}()
	if len(removed) > 0 {
		st.Removed = len(removed)
		dirty = true
	}
	if len(todo) == 0 {
		return st, nil
	}
	// Each vector goes into its row of one matrix, todo sorted by ID: when
	// the sync embeds the whole collection (a cold index), that matrix is
	// the new snapshot as is, and not copied (at 100k tools a copy of
	// 205 MB raised the peak memory by twice that).
	slices.SortFunc(todo, func(a, b *Tool) int { return strings.Compare(a.QualifiedName, b.QualifiedName) })
	mat = make([]float32, len(todo)*col.Dims)
	batch := opts.BatchSize
	if batch <= 0 {
		batch = 32
	}
	conc := opts.Concurrency
	if conc <= 0 {
		conc = 2
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(conc)
	// Embedding runs in parallel; adding to the collection, progress and
	// checkpoints run under mu, so a checkpoint never sees a half add.
	var mu sync.Mutex
	done := 0
	lastSave := time.Now()
	for start := 0; start < len(todo); start += batch {
		part := todo[start:min(start+batch, len(todo))]
		g.Go(func() error {
			texts := make([]string, len(part))
			for i, t := range part {
				texts[i] = DocumentText(t)
			}
			vecs, err := emb.EmbedDocuments(gctx, texts)
			if err != nil {
				return err
			}
			if len(vecs) != len(part) {
				return fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(part))
			}
			for i, vec := range vecs {
				if len(vec) != col.Dims {
					return fmt.Errorf("embedder returned a %d-dimensional vector for %s, collection %s wants %d", len(vec), part[i].QualifiedName, col.Name(), col.Dims)
				}
			}
			for i, vec := range vecs {
				copy(mat[(start+i)*col.Dims:(start+i+1)*col.Dims], normalized(vec))
			}
			mu.Lock()
			defer mu.Unlock()
			dirty = true
			for i, t := range part {
				fresh = append(fresh, snapRow{id: t.QualifiedName, hash: t.Hash, domain: t.Domain, group: t.Group, vec: mat[(start+i)*col.Dims : (start+i+1)*col.Dims]})
			}
			done += len(part)
			if opts.Progress != nil {
				opts.Progress(done, len(todo))
			}
			if v.dir != "" && time.Since(lastSave) > checkpointEvery && done < len(todo) {
				// A kill loses at most this much embedding work.
				if _, err := save(); err != nil {
					return err
				}
				lastSave = time.Now()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return st, err
	}
	return st, nil
}

// VectorHit is one nearest-neighbour match.
type VectorHit struct {
	ID         string
	Similarity float32
}

// Query returns up to k tools of the collection nearest to vec (by cosine
// similarity), optionally inside a domain and group.
func (v *VectorStore) Query(ctx context.Context, col Collection, vec []float32, k int, domain, group string) ([]VectorHit, error) {
	if len(vec) != col.Dims {
		return nil, fmt.Errorf("vector search: query has %d dimensions, collection %s has %d", len(vec), col.Name(), col.Dims)
	}
	snap, err := v.snapshot(ctx, col)
	if err != nil || snap == nil || k <= 0 {
		return nil, err
	}
	return snap.query(normalized(vec), k, domain, group), nil
}

// Neighbors returns up to k tools of the collection nearest to the tool
// id by its stored vector (itself left out), optionally inside a domain:
// no query to embed.
func (v *VectorStore) Neighbors(ctx context.Context, col Collection, id string, k int, domain string) ([]VectorHit, error) {
	snap, err := v.snapshot(ctx, col)
	if err != nil || snap == nil || k <= 0 {
		return nil, err
	}
	l, row := snap.find(id)
	if l == nil {
		return nil, nil
	}
	hits := snap.query(l.row(row), k+1, domain, "")
	out := hits[:0]
	for _, h := range hits {
		if h.ID != id && len(out) < k {
			out = append(out, h)
		}
	}
	return out, nil
}

// Similarities returns the cosine similarity of vec to each tool of ids
// by its stored vector (0 for a tool the collection lacks): a handful of
// tools judged without a scan.
func (v *VectorStore) Similarities(ctx context.Context, col Collection, vec []float32, ids []string) ([]float32, error) {
	if len(vec) != col.Dims {
		return nil, fmt.Errorf("vector search: query has %d dimensions, collection %s has %d", len(vec), col.Name(), col.Dims)
	}
	out := make([]float32, len(ids))
	snap, err := v.snapshot(ctx, col)
	if err != nil || snap == nil {
		return out, err
	}
	q := normalized(vec)
	for i, id := range ids {
		if l, row := snap.find(id); l != nil {
			out[i] = dot(q, l.row(row))
		}
	}
	return out, nil
}

// DomainSimilarity returns the cosine similarity of vec to each domain's
// centroid in the collection (the normalised mean of its tools' vectors):
// how well the domain as a whole matches a query.
func (v *VectorStore) DomainSimilarity(ctx context.Context, col Collection, vec []float32) (map[string]float32, error) {
	if len(vec) != col.Dims {
		return nil, fmt.Errorf("vector search: query has %d dimensions, collection %s has %d", len(vec), col.Name(), col.Dims)
	}
	snap, err := v.snapshot(ctx, col)
	if err != nil || snap == nil {
		return nil, err
	}
	q := normalized(vec)
	out := map[string]float32{}
	for d, c := range snap.domainCentroids() {
		out[d] = dot(q, c)
	}
	return out, nil
}

// QueryChromem answers like Query through chromem-go's own query path. It
// exists to measure the two against each other.
func (v *VectorStore) QueryChromem(ctx context.Context, col Collection, vec []float32, k int, domain, group string) ([]VectorHit, error) {
	c, err := v.mirror(ctx, col.Name())
	if err != nil || c == nil || c.Count() == 0 || k <= 0 {
		return nil, err
	}
	k = min(k, c.Count())
	var where map[string]string
	if domain != "" || group != "" {
		where = map[string]string{}
		if domain != "" {
			where["domain"] = domain
		}
		if group != "" {
			where["group"] = group
		}
	}
	res, err := c.QueryEmbedding(ctx, vec, k, where, nil)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	hits := make([]VectorHit, len(res))
	for i, r := range res {
		hits[i] = VectorHit{ID: r.ID, Similarity: r.Similarity}
	}
	return hits, nil
}
