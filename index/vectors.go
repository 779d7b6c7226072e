package index

import (
	"bufio"
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
// collection, loaded when the collection is first used and replaced
// atomically (temporary file, fsync, rename) after each change, and every
// few seconds while a long sync embeds. chromem-go's own persistent layout
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

// loadLocked reads the named collection's file into the database the first
// time the collection is used. A file that cannot be read is removed (its
// tools are embedded again) and said in Healed. v.mu is held.
func (v *VectorStore) loadLocked(name string) {
	if v.dir == "" || v.loaded[name] {
		return
	}
	v.loaded[name] = true
	path := v.fileOf(name)
	if s := v.snaps[name]; s != nil || v.fromSnapshot(name) {
		if s == nil {
			s = v.snaps[name]
		}
		// The snapshot holds every document of the file: refilling
		// chromem-go from it costs a fraction of decoding its export
		// (0.3 s against 5 s at 100k tools).
		if err := refill(v.db, name, s); err == nil {
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
		v.healed = append(v.healed, fmt.Sprintf("vector collection %s could not be read (%v); removed, its tools are embedded again", path, err))
	}
}

// fromSnapshot reads the named collection's snapshot file into v.snaps,
// reporting whether it could. v.mu is held.
func (v *VectorStore) fromSnapshot(name string) bool {
	s, err := readSnap(v.fileOf(name))
	if err != nil {
		return false
	}
	v.snaps[name] = s
	return true
}

// refill creates the named chromem-go collection from a snapshot.
func refill(db *chromem.DB, name string, s *snapshot) error {
	c, err := db.CreateCollection(name, nil, noEmbed)
	if err != nil {
		return err
	}
	ctx := context.Background()
	for i, id := range s.ids {
		doc := chromem.Document{
			ID:        id,
			Embedding: slices.Clone(s.mat[i*s.dims : (i+1)*s.dims]),
			Metadata:  map[string]string{"hash": s.hash[i], "domain": s.domain[i], "group": s.group[i]},
		}
		if err := c.AddDocument(ctx, doc); err != nil {
			return err
		}
	}
	return nil
}

// snapRow is one tool's row of a snapshot.
type snapRow struct {
	id, hash, domain, group string
	vec                     []float32 // normalised
}

// patchSnapshot returns old without the removed rows and the rows of
// fresh, plus fresh, sorted by ID. old may be nil.
func patchSnapshot(old *snapshot, dims int, removed []string, fresh []snapRow) *snapshot {
	drop := make(map[string]bool, len(removed)+len(fresh))
	for _, id := range removed {
		drop[id] = true
	}
	for _, r := range fresh {
		drop[r.id] = true
	}
	rows := make([]snapRow, 0, len(fresh)+func() int {
		if old == nil {
			return 0
		}
		return len(old.ids)
	}())
	if old != nil {
		for i, id := range old.ids {
			if !drop[id] {
				rows = append(rows, snapRow{id: id, hash: old.hash[i], domain: old.domain[i], group: old.group[i], vec: old.mat[i*dims : (i+1)*dims]})
			}
		}
	}
	rows = append(rows, fresh...)
	slices.SortFunc(rows, func(a, b snapRow) int { return strings.Compare(a.id, b.id) })
	s := &snapshot{dims: dims, ids: make([]string, len(rows)), hash: make([]string, len(rows)), domain: make([]string, len(rows)),
		group: make([]string, len(rows)), mat: make([]float32, 0, len(rows)*dims)}
	for i, r := range rows {
		s.ids[i], s.hash[i], s.domain[i], s.group[i] = r.id, r.hash, r.domain, r.group
		s.mat = append(s.mat, r.vec...)
	}
	return s
}

// persist writes the named collection's file: a temporary file, synced,
// then renamed over the old one, so that a kill leaves either version
// whole. Callers make sure no write to the collection runs meanwhile.
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
	// snapshot no longer matches the .gob and is rebuilt from it.
	if s == nil {
		s, err = buildSnapshot(context.Background(), v.db.GetCollection(name, noEmbed), dimsOf(name))
	}
	if err == nil && s != nil {
		err = writeSnap(path, s)
	}
	if err != nil {
		return nil, fmt.Errorf("write vector snapshot %s: %w", name, err)
	}
	if d, err := os.Open(v.dir); err == nil {
		d.Sync() // the renames themselves survive a power cut
		d.Close()
	}
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
	return len(s.ids)
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
		for i, id := range old.ids {
			existing[id] = old.hash[i]
		}
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
	// Something changes: now chromem-go's copy is needed.
	c, err := v.collection(col.Name())
	if err != nil {
		return st, err
	}
	// Every change ends in the collection's files, an error included: the
	// vectors embedded before it stay, and the next Sync resumes there.
	// The new snapshot is the old one patched: removed and re-embedded
	// rows out, the new rows in (no full read of the collection).
	dirty := false
	var fresh []snapRow
	defer func() {
		if !dirty {
			return
		}
		s := patchSnapshot(old, col.Dims, removed, fresh)
		if _, perr := v.persist(col.Name(), s); perr != nil && err == nil {
			err = perr
		}
		v.mu.Lock()
		v.snaps[col.Name()] = s
		v.mu.Unlock()
	}()
	if len(removed) > 0 {
		if err := c.Delete(ctx, nil, nil, removed...); err != nil {
			return st, fmt.Errorf("delete stale vectors: %w", err)
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
			if err := c.AddDocuments(gctx, docs, 1); err != nil {
				return fmt.Errorf("store vectors: %w", err)
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
				if _, err := v.persist(col.Name(), nil); err != nil {
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
	row, found := slices.BinarySearch(snap.ids, id)
	if !found {
		return nil, nil
	}
	hits := snap.query(snap.mat[row*snap.dims:(row+1)*snap.dims], k+1, domain, "")
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
