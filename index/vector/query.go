package vector

import (
	"context"
	"fmt"
	"slices"

	chromem "github.com/philippgille/chromem-go"
)

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
				Metadata:  map[string]string{"hash": l.hash[i], "domain": l.domain.At(i), "group": l.group.At(i)},
			})
		}
	})
	return err2
}

// mirror returns a chromem-go collection filled from the named
// collection's snapshot, for QueryChromem; nil when it is empty.
func (v *Store) mirror(ctx context.Context, name string) (*chromem.Collection, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if c := v.db.GetCollection(name, noEmbed); c != nil {
		return c, nil
	}
	snap, err := v.snapshotLocked(ctx, name, false)
	if err != nil || snap == nil {
		return nil, err
	}
	if err := refill(v.db, name, snap); err != nil {
		v.db.DeleteCollection(name)
		return nil, err
	}
	return v.db.GetCollection(name, noEmbed), nil
}

// Hit is one nearest-neighbour match.
type Hit struct {
	ID         string
	Similarity float32
}

// Query returns up to k tools of the collection nearest to vec (by cosine
// similarity), optionally inside a domain and group.
func (v *Store) Query(ctx context.Context, col Collection, vec []float32, k int, domain, group string) ([]Hit, error) {
	if len(vec) != col.Dims {
		return nil, fmt.Errorf("vector search: query has %d dimensions, collection %s has %d", len(vec), col.Name(), col.Dims)
	}
	snap, mode, err := v.snapshotScan(ctx, col)
	if err != nil || snap == nil || k <= 0 {
		return nil, err
	}
	return snap.query(normalized(vec), k, domain, group, mode), nil
}

// snapshotScan is snapshot, with the scan queries use (ScanEnv,
// SetScanMode), or why it is refused.
func (v *Store) snapshotScan(ctx context.Context, col Collection) (*snapshot, ScanMode, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.scanErr != nil {
		return nil, 0, fmt.Errorf("vector search: %w", v.scanErr)
	}
	s, err := v.snapshotLocked(ctx, col.Name(), false)
	return s, v.scan, err
}

// Neighbors returns up to k tools of the collection nearest to the tool
// id by its stored vector (itself left out), optionally inside a domain:
// no query to embed.
func (v *Store) Neighbors(ctx context.Context, col Collection, id string, k int, domain string) ([]Hit, error) {
	snap, mode, err := v.snapshotScan(ctx, col)
	if err != nil || snap == nil || k <= 0 {
		return nil, err
	}
	l, row := snap.find(id)
	if l == nil {
		return nil, nil
	}
	hits := snap.query(l.row(row), k+1, domain, "", mode)
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
func (v *Store) Similarities(ctx context.Context, col Collection, vec []float32, ids []string) ([]float32, error) {
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
// how well the domain as a whole matches a query. A map by name, for
// callers that read a few; a search reads DomainSimilaritiesInto's,
// which writes no name (domainsims.go).
func (v *Store) DomainSimilarity(ctx context.Context, col Collection, vec []float32) (map[string]float32, error) {
	d, err := v.DomainSimilaritiesInto(ctx, col, vec, nil)
	if err != nil || d.t == nil {
		return nil, err
	}
	out := make(map[string]float32, d.Len())
	for i := range d.Len() {
		out[d.Name(i)] = d.At(i)
	}
	return out, nil
}

// QueryChromem answers like Query through chromem-go's own query path. It
// exists to measure the two against each other.
func (v *Store) QueryChromem(ctx context.Context, col Collection, vec []float32, k int, domain, group string) ([]Hit, error) {
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
	hits := make([]Hit, len(res))
	for i, r := range res {
		hits[i] = Hit{ID: r.ID, Similarity: r.Similarity}
	}
	return hits, nil
}

// Centroid returns the normalised mean of the stored vectors of the
// tools ids (those the collection lacks left out; nil when it has none
// of them): the direction a handful of tools share.
func (v *Store) Centroid(ctx context.Context, col Collection, ids []string) ([]float32, error) {
	snap, err := v.snapshot(ctx, col)
	if err != nil || snap == nil {
		return nil, err
	}
	var sum []float32
	for _, id := range ids {
		l, row := snap.find(id)
		if l == nil {
			continue
		}
		if sum == nil {
			sum = make([]float32, snap.dims)
		}
		for i, x := range l.row(row) {
			sum[i] += x
		}
	}
	if sum == nil {
		return nil, nil
	}
	return normalized(sum), nil
}
