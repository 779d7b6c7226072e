package keyword

import (
	"context"
	"errors"

	"github.com/blevesearch/bleve/v2"
)

// SetPartDocs sets the number of documents per part of a divided keyword
// query (zero or less: never divided).
func (k *Index) SetPartDocs(n int) { k.partDocs = n }

// SetBatchDocs sets the number of documents per batch, and so per
// segment, that Sync writes (zero: the index's own).
func (k *Index) SetBatchDocs(n int) { k.batchDocs = n }

// Segments returns the number of segments of the index's current
// snapshot and the deleted documents they hold.
func (k *Index) Segments() (int, int, error) {
	adv, err := k.idx.Advanced()
	if err != nil {
		return 0, 0, err
	}
	r, err := adv.Reader()
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	segs, deleted := segmentsOf(r)
	return len(segs), deleted, nil
}

// PartDocs returns the number of documents per part of a divided keyword
// query.
func (k *Index) PartDocs() int { return k.partDocs }

// PartHits returns every match of q, first of the whole index, then of
// each of parts parts, as Bleve scored them; all on one snapshot of the
// index (a background merge renumbers documents).
func (k *Index) PartHits(ctx context.Context, q Query, parts int) ([]map[string]float64, error) {
	top, _, err := buildQuery(q)
	if err != nil {
		return nil, err
	}
	for range 100 {
		adv, err := k.idx.Advanced()
		if err != nil {
			return nil, err
		}
		r, err := adv.Reader()
		if err != nil {
			return nil, err
		}
		docs, err := r.DocCount()
		if err != nil {
			return nil, err
		}
		pin := &snapshotPin{want: r}
		var out []map[string]float64
		for p := -1; p < parts; p++ {
			pq := partQuery{q: top, part: p, parts: parts, pin: pin}
			if p < 0 {
				pq.part, pq.parts = 0, 1
			}
			res, err := k.search(ctx, bleve.NewSearchRequestOptions(pq, int(docs)+1, 0, false))
			if err != nil {
				r.Close()
				return nil, err
			}
			hits := make(map[string]float64, len(res.Hits))
			for _, h := range res.Hits {
				hits[h.ID] = h.Score
			}
			out = append(out, hits)
		}
		r.Close()
		if !pin.moved.Load() {
			return out, nil
		}
	}
	return nil, errors.New("the index kept changing")
}
