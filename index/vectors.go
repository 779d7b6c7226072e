package index

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	chromem "github.com/philippgille/chromem-go"
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
// chromem-go is the store of record (adds, deletes, its gob export format).
// On disk each collection is one file, chromem-go's export of that
// collection, replaced atomically (temporary file, fsync, rename) after a
// large change, and every few seconds while a long sync embeds; a small
// change goes into a delta file beside it, in the same format (see
// deltaFraction). chromem-go's own persistent layout
// (a file per document, named by 32 bits of a hash of its ID) is not used:
// at 100k tools two IDs share a file name about once (each start then
// re-embeds them and one is always missing), 100k small files open slowly,
// and a kill mid-write leaves a cut file. Data dirs in that layout are
// migrated on open.
//
// Queries scan a contiguous copy of a collection's vectors, rebuilt after
// each Sync: chromem's own query path sends every document through a
// channel and a lock, which costs more than the dot products at 10k tools
// (BENCHMARKS.md).
type VectorStore struct {
	db  *chromem.DB
	dir string // "" in memory

	mu     sync.Mutex
	snaps  map[string]*snapshot
	loaded map[string]bool // collections read from dir (or found missing)
	healed []string
}

// OpenVectors opens the vector store in dir, creating it when missing. An
// empty dir keeps the vectors in memory. Collections load on first use.
func OpenVectors(dir string) (*VectorStore, error) {
	v := &VectorStore{db: chromem.NewDB(), dir: dir, snaps: map[string]*snapshot{}, loaded: map[string]bool{}}
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
	removeLeftoverTemps(dir)
	return v, nil
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
	tmpSuffix     = ".tmp-"
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

// loadLocked reads the named collection into the database the first time
// chromem-go's copy is needed. From the snapshot when it can (refilling
// chromem-go from it costs a fraction of decoding its export: 0.3 s
// against 5 s at 100k tools), else by importing the base file and its
// delta. A file that cannot be read is removed (its tools are embedded
// again) and said in Healed. v.mu is held.
func (v *VectorStore) loadLocked(name string) {
	if v.dir == "" || v.loaded[name] {
		return
	}
	v.loaded[name] = true
	path := v.fileOf(name)
	if s := v.snaps[name]; s != nil || v.fromSnapshot(name) {
		if err := refill(v.db, name, v.snaps[name]); err == nil {
			return
		}
		v.db.DeleteCollection(name)
	}
	f, err := os.Open(path)
	if err != nil {
		return // not written yet
	}
	defer f.Close()
	err = guard("read "+path, func() error { return v.db.ImportFromReader(f, "", name) })
	if err == nil && v.db.GetCollection(name, noEmbed) == nil {
		err = fmt.Errorf("collection %q is not in the file", name)
	}
	if err != nil {
		v.db.DeleteCollection(name)
		os.Remove(path)
		v.removeDelta(name)
		v.healed = append(v.healed, fmt.Sprintf("vector collection %s could not be read (%v); removed, its tools are embedded again", path, err))
		return
	}
	// The base's snapshot was missing or stale: write it again, so that
	// the next start reads it instead of the export.
	c := v.db.GetCollection(name, noEmbed)
	base, err := buildSnapshot(context.Background(), c, dimsOf(name))
	if err != nil || base == nil {
		return
	}
	writeSnap(path, base, nil, fileTag{})
	s := v.withDeltaFile(name, base)
	if s.top != nil {
		// chromem-go's copy gets the delta too.
		var ids []string
		for i, id := range s.ids {
			if s.dead[i] {
				ids = append(ids, id)
			}
		}
		if err := c.Delete(context.Background(), nil, nil, ids...); err == nil {
			err = c.AddDocuments(context.Background(), docsOf(s.top), 1)
		}
		if err != nil {
			v.db.DeleteCollection(name)
			v.loaded[name] = false
			return
		}
	}
	v.snaps[name] = s
}

// fromSnapshot reads the named collection's snapshot file, and its
// delta's, into v.snaps, reporting whether it could. v.mu is held.
func (v *VectorStore) fromSnapshot(name string) bool {
	s, _, _, err := readSnap(v.fileOf(name))
	if err != nil {
		return false
	}
	v.snaps[name] = v.withDeltaFile(name, s)
	return true
}

// docsOf returns the rows of one layer as chromem-go documents.
func docsOf(l *snapshot) []chromem.Document {
	docs := make([]chromem.Document, len(l.ids))
	for i, id := range l.ids {
		docs[i] = chromem.Document{
			ID:        id,
			Embedding: slices.Clone(l.row(i)),
			Metadata:  map[string]string{"hash": l.hash[i], "domain": l.domain[i], "group": l.group[i]},
		}
	}
	return docs
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
				Metadata:  map[string]string{"hash": l.hash[i], "domain": l.domain[i], "group": l.group[i]},
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
// or base when there is none. The delta's snapshot is read when it
// matches its .gob, else the .gob through chromem-go. v.mu is held.
func (v *VectorStore) withDeltaFile(name string, base *snapshot) *snapshot {
	path := v.fileOf(name)
	dpath := deltaFileOf(path)
	if _, err := os.Stat(dpath); err != nil {
		return base
	}
	bt, err := tagOf(path)
	if err != nil {
		return base
	}
	top, removed, forBase, err := readSnap(dpath)
	if err != nil {
		// A kill between the delta's two writes: its .gob is whole.
		top, removed, forBase, err = readDeltaGob(dpath, name)
		if err == nil && forBase == bt {
			writeSnap(dpath, top, removed, forBase)
		}
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

// readDeltaGob reads a delta's .gob: its rows, removed IDs and base tag.
func readDeltaGob(dpath, name string) (*snapshot, []string, fileTag, error) {
	var bt fileTag
	f, err := os.Open(dpath)
	if err != nil {
		return nil, nil, bt, err
	}
	defer f.Close()
	var exp chromemExport
	if err := guard("read "+dpath, func() error { return gob.NewDecoder(bufio.NewReader(f)).Decode(&exp) }); err != nil {
		return nil, nil, bt, err
	}
	c := exp.Collections[name]
	if c == nil {
		return nil, nil, bt, fmt.Errorf("collection %q is not in the file", name)
	}
	if _, err := fmt.Sscanf(c.Metadata[metaBase], "%d:%d", &bt.size, &bt.mtime); err != nil {
		return nil, nil, bt, fmt.Errorf("delta without a base tag: %w", err)
	}
	var removed []string
	if r := c.Metadata[metaRemoved]; r != "" {
		if err := json.Unmarshal([]byte(r), &removed); err != nil {
			return nil, nil, bt, fmt.Errorf("delta removed list: %w", err)
		}
	}
	dims := dimsOf(name)
	rows := make([]snapRow, 0, len(c.Documents))
	for _, d := range c.Documents {
		if len(d.Embedding) != dims {
			return nil, nil, bt, fmt.Errorf("%s has %d dimensions, want %d", d.ID, len(d.Embedding), dims)
		}
		rows = append(rows, snapRow{id: d.ID, hash: d.Metadata["hash"], domain: d.Metadata["domain"], group: d.Metadata["group"], vec: normalized(d.Embedding)})
	}
	return flat(dims, rows), removed, bt, nil
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
	db := chromem.NewDB()
	c, err := db.CreateCollection(name, map[string]string{metaBase: bt.String(), metaRemoved: string(raw)}, noEmbed)
	if err == nil && len(s.top.ids) > 0 {
		err = c.AddDocuments(context.Background(), docsOf(s.top), 1)
	}
	if err == nil {
		err = WriteFileAtomic(dpath, func(w *bufio.Writer) error { return db.ExportToWriter(w, false, "", name) })
	}
	if err == nil {
		err = writeSnap(dpath, s.top, removed, bt)
	}
	if err != nil {
		return fmt.Errorf("write vector delta %s: %w", dpath, err)
	}
	syncDir(v.dir)
	return nil
}

// syncDir makes the renames in dir survive a power cut.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// persist writes the named collection's file whole: a temporary file,
// synced, then renamed over the old one, so that a kill leaves either
// version whole; then its snapshot, and removes the delta it now holds.
// Callers make sure no write to the collection runs meanwhile.
func (v *VectorStore) persist(name string, s *snapshot) (*snapshot, error) {
	if v.dir == "" {
		return nil, nil
	}
	path := v.fileOf(name)
	err := WriteFileAtomic(path, func(w *bufio.Writer) error { return v.db.ExportToWriter(w, false, "", name) })
	if err != nil {
		return nil, fmt.Errorf("write vector collection %s: %w", name, err)
	}
	// The snapshot file goes second: if a kill comes between the two, the
	// snapshot no longer matches the .gob and is rebuilt from it; the
	// delta names the old .gob and is ignored.
	if s == nil {
		s, err = buildSnapshot(context.Background(), v.db.GetCollection(name, noEmbed), dimsOf(name))
	}
	if err == nil && s != nil {
		err = writeSnap(path, s, nil, fileTag{})
	}
	if err == nil {
		err = v.removeDelta(name)
	}
	if err != nil {
		return nil, fmt.Errorf("write vector snapshot %s: %w", name, err)
	}
	syncDir(v.dir)
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
			if !v.loaded[name] {
				f, err := os.CreateTemp(v.dir, "migrate"+tmpSuffix+"*")
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
				v.loaded[name] = true
				if _, err := v.persist(name, nil); err != nil {
					return err
				}
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

func (v *VectorStore) collection(name string) (*chromem.Collection, error) {
	v.mu.Lock()
	v.loadLocked(name)
	v.mu.Unlock()
	c, err := v.db.GetOrCreateCollection(name, nil, noEmbed)
	if err != nil {
		return nil, fmt.Errorf("vector collection %s: %w", name, err)
	}
	return c, nil
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
	names := map[string]bool{}
	for name := range v.db.ListCollections() {
		names[name] = true
	}
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
		v.loaded[name] = true // deleted: nothing to load
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
	name := col.Name()
	// A small change goes into the collection's delta (see deltaFraction);
	// a large one, or a first write, rewrites the collection whole, which
	// needs chromem-go's copy.
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
	var c *chromem.Collection
	if !useDelta {
		if c, err = v.collection(name); err != nil {
			return st, err
		}
	}
	// Every change ends in the collection's files, an error included: the
	// vectors embedded before it stay, and the next Sync resumes there.
	// The new snapshot is the old one patched: removed and re-embedded
	// rows out, the new rows in (no full read of the collection).
	dirty := false
	var fresh []snapRow
	save := func() (*snapshot, error) {
		if !useDelta {
			s := patchSnapshot(old, col.Dims, removed, fresh)
			_, err := v.persist(name, s)
			return s, err
		}
		s := old.withDelta(removed, fresh)
		err := v.persistDelta(name, s)
		// chromem-go's copy, if loaded, no longer matches: the next full
		// write refills it from the snapshot.
		v.mu.Lock()
		if v.loaded[name] {
			v.db.DeleteCollection(name)
			v.loaded[name] = false
		}
		v.mu.Unlock()
		return s, err
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
		v.mu.Unlock()
	}()
	if len(removed) > 0 {
		if c != nil {
			if err := c.Delete(ctx, nil, nil, removed...); err != nil {
				return st, fmt.Errorf("delete stale vectors: %w", err)
			}
		}
		st.Removed = len(removed)
		dirty = true
	}
	if len(todo) == 0 {
		return st, nil
	}
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
			docs := make([]chromem.Document, len(part))
			for i, t := range part {
				docs[i] = chromem.Document{
					ID:        t.QualifiedName,
					Embedding: vecs[i],
					Metadata:  map[string]string{"hash": t.Hash, "domain": t.Domain, "group": t.Group},
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if c != nil {
				if err := c.AddDocuments(gctx, docs, 1); err != nil {
					return fmt.Errorf("store vectors: %w", err)
				}
			}
			dirty = true
			for i, t := range part {
				fresh = append(fresh, snapRow{id: t.QualifiedName, hash: t.Hash, domain: t.Domain, group: t.Group, vec: normalized(vecs[i])})
			}
			done += len(part)
			if opts.Progress != nil {
				opts.Progress(done, len(todo))
			}
			if v.dir != "" && time.Since(lastSave) > checkpointEvery && done < len(todo) {
				// A kill loses at most this much embedding work.
				var err error
				if useDelta {
					err = v.persistDelta(name, old.withDelta(removed, fresh))
				} else {
					_, err = v.persist(name, nil)
				}
				if err != nil {
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
	c := v.db.GetCollection(col.Name(), noEmbed)
	if c == nil || c.Count() == 0 || k <= 0 {
		return nil, nil
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
