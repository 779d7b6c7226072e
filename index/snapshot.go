package index

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
)

// snapshot is a read-only, contiguous copy of one collection's vectors.
type snapshot struct {
	dims   int
	ids    []string
	domain []string
	group  []string
	mat    []float32 // len(ids) × dims, rows L2-normalised

	centroidsOnce sync.Once
	centroids     map[string][]float32 // domain → normalised mean of its rows
}

// domainCentroids returns each domain's centroid: the normalised mean of
// its tools' vectors, computed once per snapshot.
func (s *snapshot) domainCentroids() map[string][]float32 {
	s.centroidsOnce.Do(func() {
		s.centroids = map[string][]float32{}
		for i, d := range s.domain {
			c := s.centroids[d]
			if c == nil {
				c = make([]float32, s.dims)
				s.centroids[d] = c
			}
			for j, x := range s.mat[i*s.dims : (i+1)*s.dims] {
				c[j] += x
			}
		}
		for d, c := range s.centroids {
			s.centroids[d] = normalized(c)
		}
	})
	return s.centroids
}

func (v *VectorStore) invalidate(col Collection) {
	v.mu.Lock()
	delete(v.snaps, col.Name())
	v.mu.Unlock()
}

// snapshot returns the collection's snapshot, building it on first use.
// It returns nil for a missing or empty collection.
func (v *VectorStore) snapshot(ctx context.Context, col Collection) (*snapshot, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.snaps[col.Name()]; ok {
		return s, nil
	}
	v.loadLocked(col.Name())
	c := v.db.GetCollection(col.Name(), noEmbed)
	if c == nil || c.Count() == 0 {
		return nil, nil
	}
	unit := make([]float32, col.Dims)
	unit[0] = 1
	res, err := c.QueryEmbedding(ctx, unit, c.Count(), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("read vector collection %s: %w", col.Name(), err)
	}
	// A stable order keeps ties deterministic.
	sort.Slice(res, func(i, j int) bool { return res[i].ID < res[j].ID })
	s := &snapshot{dims: col.Dims, mat: make([]float32, 0, len(res)*col.Dims)}
	for _, r := range res {
		if len(r.Embedding) != col.Dims {
			return nil, fmt.Errorf("vector collection %s: %s has %d dimensions, want %d", col.Name(), r.ID, len(r.Embedding), col.Dims)
		}
		s.ids = append(s.ids, r.ID)
		s.domain = append(s.domain, r.Metadata["domain"])
		s.group = append(s.group, r.Metadata["group"])
		s.mat = append(s.mat, r.Embedding...)
	}
	v.snaps[col.Name()] = s
	return s, nil
}

func normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.Abs(n-1) < 1e-4 {
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// scanParallelMin is the matrix size (rows × dims) from which a query is
// split across CPUs.
const scanParallelMin = 1 << 20

func (s *snapshot) query(q []float32, k int, domain, group string) []VectorHit {
	n := len(s.ids)
	parts := 1
	if n*s.dims >= scanParallelMin {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	tops := make([]topK, parts)
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Add(1)
		go func(t *topK) {
			defer wg.Done()
			t.k = k
			for i := lo; i < hi; i++ {
				if domain != "" && s.domain[i] != domain || group != "" && s.group[i] != group {
					continue
				}
				row := s.mat[i*s.dims : (i+1)*s.dims]
				var dot float32
				for j, x := range q {
					dot += x * row[j]
				}
				t.push(i, dot)
			}
		}(&tops[p])
	}
	wg.Wait()
	all := tops[0]
	for _, t := range tops[1:] {
		for _, e := range t.items {
			all.push(e.row, e.sim)
		}
	}
	sort.Slice(all.items, func(i, j int) bool {
		if all.items[i].sim != all.items[j].sim {
			return all.items[i].sim > all.items[j].sim
		}
		return all.items[i].row < all.items[j].row
	})
	hits := make([]VectorHit, len(all.items))
	for i, e := range all.items {
		hits[i] = VectorHit{ID: s.ids[e.row], Similarity: e.sim}
	}
	return hits
}

type scored struct {
	row int
	sim float32
}

// topK keeps the k highest similarities in a min-heap.
type topK struct {
	k     int
	items []scored
}

func (t *topK) Len() int           { return len(t.items) }
func (t *topK) Less(i, j int) bool { return t.items[i].sim < t.items[j].sim }
func (t *topK) Swap(i, j int)      { t.items[i], t.items[j] = t.items[j], t.items[i] }
func (t *topK) Push(x any)         { t.items = append(t.items, x.(scored)) }
func (t *topK) Pop() any {
	x := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	return x
}

func (t *topK) push(row int, sim float32) {
	if len(t.items) < t.k {
		heap.Push(t, scored{row, sim})
		return
	}
	if sim > t.items[0].sim {
		t.items[0] = scored{row, sim}
		heap.Fix(t, 0)
	}
}
