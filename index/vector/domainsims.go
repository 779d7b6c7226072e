package vector

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// DomainSims are the cosine similarities of a request to each domain's
// centroid in a collection (the normalised mean of its tools' vectors),
// in a fixed order of the collection's domains: a name's place is found
// through an index made once per snapshot, and a search writes only a
// []float32 (Store.DomainSimilaritiesInto), which its caller reuses. At
// 1M tools in 10,000 domains, writing every domain's name into a map
// was about 70% of the 5.3-5.9 ms of CPU the similarities took a hybrid
// search (docs/benchmarks/2026-12-06-fusion-1m.md). The zero value holds
// no domain. Read-only; valid as long as the slice it was written into is
// not reused.
type DomainSims struct {
	t   *domainTable
	sim []float32 // by place in t.names
}

// Len returns how many domains d holds.
func (d DomainSims) Len() int { return len(d.sim) }

// Name returns the name of the i-th domain (0 <= i < Len).
func (d DomainSims) Name(i int) string { return d.t.names[i] }

// At returns the similarity of the i-th domain (0 <= i < Len).
func (d DomainSims) At(i int) float32 { return d.sim[i] }

// Of returns domain name's similarity, and whether d holds it.
func (d DomainSims) Of(name string) (float32, bool) {
	if d.t == nil {
		return 0, false
	}
	i, ok := d.t.pos[name]
	if !ok {
		return 0, false
	}
	return d.sim[i], true
}

// Buffer returns the slice the similarities were written into, for the
// caller to give to the next DomainSimilaritiesInto once it no longer
// reads d.
func (d DomainSims) Buffer() []float32 { return d.sim }

// domainTable is a snapshot's domains in a fixed order (by name), each
// one's place by name and their centroids in that order in one matrix:
// made once per snapshot (snapshot.domainTable), read by every search.
// The matrix, not the centroids' own vectors one by one: those lie in
// memory in the order the centroids map was filled, and a search that
// read them by name's order missed the cache at each one (the dot
// products took 4.2 ms of CPU a hybrid search at 1M tools in 10,000
// domains of 384 dimensions, against 0.65 ms in the map's order).
type domainTable struct {
	once  sync.Once
	names []string
	pos   map[string]int32 // read-only once made
	dims  int
	mat   []float32 // len(names) × dims, row i domain names[i]'s centroid
}

// domainTable returns s's domains in their fixed order, made from its
// centroids (domainCentroids) the first time. The centroids map's
// vectors are then the matrix's rows, so that the snapshot holds each
// centroid once: nothing else reads that map (DomainSimilarity reads
// the table) but tests, which read it after.
func (s *snapshot) domainTable() *domainTable {
	t := &s.domTable
	t.once.Do(func() {
		c := s.domainCentroids()
		t.names = make([]string, 0, len(c))
		for d := range c {
			t.names = append(t.names, d)
		}
		slices.Sort(t.names)
		t.pos = make(map[string]int32, len(t.names))
		t.dims = s.dims
		t.mat = make([]float32, len(t.names)*s.dims)
		for i, d := range t.names {
			t.pos[d] = int32(i)
			row := t.mat[i*s.dims : (i+1)*s.dims : (i+1)*s.dims]
			copy(row, c[d])
			c[d] = row
		}
	})
	return t
}

// DomainSimilaritiesInto returns the cosine similarity of vec to each
// domain's centroid in the collection (how well the domain as a whole
// matches a request), written into buf (grown when too short; its
// contents are overwritten): a caller that gives back DomainSims.Buffer
// of its previous search allocates nothing of the domains.
func (v *Store) DomainSimilaritiesInto(ctx context.Context, col Collection, vec []float32, buf []float32) (DomainSims, error) {
	if len(vec) != col.Dims {
		return DomainSims{}, fmt.Errorf("vector search: query has %d dimensions, collection %s has %d", len(vec), col.Name(), col.Dims)
	}
	snap, err := v.snapshot(ctx, col)
	if err != nil || snap == nil {
		return DomainSims{}, err
	}
	t := snap.domainTable()
	q := normalized(vec)
	n, dims := len(t.names), t.dims
	sim := slices.Grow(buf[:0], n)[:n]
	for i := range sim {
		sim[i] = dot(q, t.mat[i*dims:(i+1)*dims])
	}
	return DomainSims{t: t, sim: sim}, nil
}

// DomainSimsOf returns the similarities m by name as a DomainSims (its
// own order and index made from m's names): for a caller that has them
// by name, such as a test.
func DomainSimsOf(m map[string]float32) DomainSims {
	t := &domainTable{names: make([]string, 0, len(m)), pos: make(map[string]int32, len(m))}
	for d := range m {
		t.names = append(t.names, d)
	}
	slices.Sort(t.names)
	sim := make([]float32, len(t.names))
	for i, d := range t.names {
		t.pos[d] = int32(i)
		sim[i] = m[d]
	}
	return DomainSims{t: t, sim: sim}
}
