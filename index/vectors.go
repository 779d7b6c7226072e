package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

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
// chromem-go is the store of record (persistence, adds, deletes). Queries
// scan a contiguous copy of a collection's vectors, rebuilt after each Sync:
// chromem's own query path sends every document through a channel and a
// lock, which costs more than the dot products at 10k tools (BENCHMARKS.md).
type VectorStore struct {
	db *chromem.DB
	// healed says what OpenVectors repaired, when it did.
	healed []string

	mu    sync.Mutex
	snaps map[string]*snapshot
}

// OpenVectors opens the persistent vector store in dir, creating it when
// missing. An empty dir keeps the vectors in memory.
func OpenVectors(dir string) (*VectorStore, error) {
	if dir == "" {
		return &VectorStore{db: chromem.NewDB(), snaps: map[string]*snapshot{}}, nil
	}
	db, err := openChromem(dir)
	if err == nil {
		return &VectorStore{db: db, snaps: map[string]*snapshot{}}, nil
	}
	// A kill while chromem-go wrote a file leaves it empty or cut, and
	// chromem-go then refuses the whole folder: remove what cannot be read
	// (the next sync embeds those tools again), or, failing that, start
	// the folder over.
	removed, herr := healVectorDir(dir)
	if herr == nil {
		if db, err2 := openChromem(dir); err2 == nil {
			return &VectorStore{db: db, snaps: map[string]*snapshot{}, healed: []string{fmt.Sprintf("vector store %s could not be read (%v); removed %d damaged files (%s), their tools are embedded again", dir, err, len(removed), strings.Join(firstN(removed, 3), ", "))}}, nil
		}
	}
	if rerr := os.RemoveAll(dir); rerr != nil {
		return nil, fmt.Errorf("open vector store %s: %w; removing it to rebuild failed: %v", dir, err, rerr)
	}
	db, err2 := openChromem(dir)
	if err2 != nil {
		return nil, fmt.Errorf("open vector store %s: %w", dir, err2)
	}
	return &VectorStore{db: db, snaps: map[string]*snapshot{}, healed: []string{fmt.Sprintf("vector store %s could not be read (%v); started over, every tool is embedded again", dir, err)}}, nil
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
	c, err := v.db.GetOrCreateCollection(name, nil, noEmbed)
	if err != nil {
		return nil, fmt.Errorf("vector collection %s: %w", name, err)
	}
	return c, nil
}

// Count returns the number of vectors in the named collection.
func (v *VectorStore) Count(col Collection) int {
	c := v.db.GetCollection(col.Name(), noEmbed)
	if c == nil {
		return 0
	}
	return c.Count()
}

// Prune deletes the collections of provider other than keep, and returns
// their names. The built-in embedder's collections are named after its
// lexicon fingerprint, so each lexicon change would otherwise leave one
// behind.
func (v *VectorStore) Prune(provider string, keep Collection) ([]string, error) {
	var gone []string
	for name := range v.db.ListCollections() {
		if strings.HasPrefix(name, provider+":") && name != keep.Name() {
			if err := v.db.DeleteCollection(name); err != nil {
				return gone, fmt.Errorf("delete vector collection %s: %w", name, err)
			}
			gone = append(gone, name)
		}
	}
	v.mu.Lock()
	for _, name := range gone {
		delete(v.snaps, name)
	}
	v.mu.Unlock()
	return gone, nil
}

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
func (v *VectorStore) Sync(ctx context.Context, col Collection, cat *Catalog, emb DocumentEmbedder, opts VectorSyncOptions) (SyncStats, error) {
	var st SyncStats
	if col.Dims <= 0 {
		return st, fmt.Errorf("vector collection %s: dimension unknown", col.Name())
	}
	c, err := v.collection(col.Name())
	if err != nil {
		return st, err
	}
	defer v.invalidate(col)
	existing, err := listHashes(ctx, c, col.Dims)
	if err != nil {
		return st, err
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
	if len(removed) > 0 {
		if err := c.Delete(ctx, nil, nil, removed...); err != nil {
			return st, fmt.Errorf("delete stale vectors: %w", err)
		}
		st.Removed = len(removed)
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
	var mu sync.Mutex
	done := 0
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
			if err := c.AddDocuments(gctx, docs, 1); err != nil {
				return fmt.Errorf("store vectors: %w", err)
			}
			mu.Lock()
			done += len(part)
			if opts.Progress != nil {
				opts.Progress(done, len(todo))
			}
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return st, err
	}
	return st, nil
}

// listHashes returns the ID → content hash of every document in c. chromem
// has no listing call, so it asks for all documents by similarity to a unit
// vector, which returns their metadata too.
func listHashes(ctx context.Context, c *chromem.Collection, dims int) (map[string]string, error) {
	n := c.Count()
	out := make(map[string]string, n)
	if n == 0 {
		return out, nil
	}
	unit := make([]float32, dims)
	unit[0] = 1
	res, err := c.QueryEmbedding(ctx, unit, n, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("read vector collection %s: %w", c.Name, err)
	}
	for _, r := range res {
		out[r.ID] = r.Metadata["hash"]
	}
	return out, nil
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
		var dot float32
		for j, x := range q {
			dot += x * c[j]
		}
		out[d] = dot
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
