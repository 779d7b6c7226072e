package vector

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	chromem "github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/index/vector/snapfile"
	"gonum.org/v1/gonum/blas/blas32"
)

// snapshot is a read-only, contiguous copy of one collection's vectors,
// rows sorted by ID.
//
// A collection with a delta (see Store) is two layers: this one
// holds the base file's rows, dead marks those the delta removes or
// replaces (ndead of them), and top holds the delta's rows. Read it
// through count, each, find and query, which see the live rows of both.
type snapshot struct {
	id     uint64 // the base layer's file id (writeSnap); 0 until written or read
	dims   int
	ids    []string
	hash   []string // content hash of each tool's vector
	domain labels
	group  labels
	// The matrix, len(ids) × dims, rows L2-normalised: half as a file of
	// the current format holds it (float16, snapfile's half.go, in the
	// file's mapped pages), or mat (float32: a layer built in memory, or
	// read from a file of an earlier format). One of the two is set; read
	// it through row, rowTo and dotRow.
	mat   []float32
	half  []uint16
	signs *signs // the quantized rows (quant.go); nil: exact scans only
	// sums are the domains' vector sums the layer's file holds
	// (snapfile.DomainSums, per domain of domain.Names): its centroids
	// without a pass over the rows. nil when not known.
	sums []float32
	// format: the magic of the earlier format the layer was read from
	// (snapV7: without the domain sums; snapV6: also float32; or snapV5:
	// without the quantized rows, quantized as it was read); "" for the
	// current one.
	format string

	dead  []bool // nil when no row is dead
	ndead int
	top   *snapshot

	centroidsOnce sync.Once
	centroids     map[string][]float32 // domain → normalised mean of its rows
	domTable      domainTable          // the domains in a fixed order (domainsims.go)
}

// labels is a column of strings that repeat from row to row (domains,
// groups), an index per row (snapfile.Labels).
type labels = snapfile.Labels

// domainCentroids returns each domain's centroid: the normalised mean of
// its tools' vectors, computed once per snapshot (domainSums).
func (s *snapshot) domainCentroids() map[string][]float32 {
	s.centroidsOnce.Do(func() {
		s.centroids = s.domainSums()
		for d, c := range s.centroids {
			s.centroids[d] = normalized(c)
		}
	})
	return s.centroids
}

// domainSums returns each domain's sum of its live rows, added up base
// layer first, then the top's, each in row order. A domain that has
// neither a dead row nor a row on top takes the sum the base layer's
// file holds (the same values: the writer added up the same rows in the
// same order), so a start adds up only the rows of the domains a delta
// touched, not every row; a layer without them (an earlier format, or
// built in memory) adds up every row.
func (s *snapshot) domainSums() map[string][]float32 {
	out := map[string][]float32{}
	var fromFile []bool // by base domain index
	if s.sums != nil && len(s.sums) == len(s.domain.Names)*s.dims {
		fromFile = make([]bool, len(s.domain.Names))
		for k := range fromFile {
			fromFile[k] = true
		}
		for i, dead := range s.dead {
			if dead {
				fromFile[s.domain.Idx[i]] = false
			}
		}
		if s.top != nil {
			for _, d := range s.top.domain.Names {
				if k, ok := s.domain.Find(d); ok {
					fromFile[k] = false
				}
			}
		}
		for k, d := range s.domain.Names {
			if fromFile[k] {
				out[d] = slices.Clone(s.sums[k*s.dims : (k+1)*s.dims]) // not the file's pages
			}
		}
	}
	buf := make([]float32, s.dims)
	s.each(func(l *snapshot, i int) {
		if l == s && fromFile != nil && fromFile[s.domain.Idx[i]] {
			return
		}
		d := l.domain.At(i)
		c := out[d]
		if c == nil {
			c = make([]float32, s.dims)
			out[d] = c
		}
		if l.mat != nil {
			for j, x := range l.mat[i*s.dims : (i+1)*s.dims] {
				c[j] += x
			}
			return
		}
		for j, x := range l.rowTo(buf, i) {
			c[j] += x
		}
	})
	return out
}

// row returns row i's vector: the matrix's own (read-only), or a copy
// converted from float16.
func (s *snapshot) row(i int) []float32 {
	if s.mat != nil {
		return s.mat[i*s.dims : (i+1)*s.dims]
	}
	return s.rowTo(make([]float32, s.dims), i)
}

// rowTo returns row i's vector in dst (len dims), converted from float16,
// or the matrix's own row when it is float32.
func (s *snapshot) rowTo(dst []float32, i int) []float32 {
	if s.mat != nil {
		return s.mat[i*s.dims : (i+1)*s.dims]
	}
	snapfile.HalfRow(dst, s.half[i*s.dims:(i+1)*s.dims])
	return dst
}

// asWritten returns the layer s as a file of the current format holds
// it, with the file id id: its matrix as float16, a new snapshot (s may
// be read meanwhile).
func (s *snapshot) asWritten(id uint64) *snapshot {
	out := &snapshot{id: id, dims: s.dims, ids: s.ids, hash: s.hash, domain: s.domain, group: s.group, half: s.half, signs: s.signs}
	if s.mat != nil {
		out.half = snapfile.HalfRows(s.mat)
	}
	return out
}

// dotRow is the dot product of q with row i. For a float16 layer qs is
// q scaled by 2^112 (halfQuery), so that each value's float16 bits,
// moved to float32's places, multiply as they are (halfBits): a few
// integer operations a value where a conversion to float32 first (a
// table of 256 KiB read at random, or snapfile.HalfRow into a buffer
// for gonum) made a 20k-tool exact scan several times slower. The
// products are exact (scaling by a power of two), only their sum's
// order differs from gonum's.
func (s *snapshot) dotRow(q, qs []float32, i int) float32 {
	if s.mat != nil {
		return dot(q, s.mat[i*s.dims:(i+1)*s.dims])
	}
	if qs == nil {
		return dotHalfKernel(q, s.half[i*s.dims:(i+1)*s.dims])
	}
	return dotHalf(qs, s.half[i*s.dims:(i+1)*s.dims])
}

// halfQuery returns q scaled by 2^112 for dotHalf; nil for a layer of
// float32 rows, or where dotHalfKernel scores (dothalf_amd64.go).
func (s *snapshot) halfQuery(q []float32) []float32 {
	if s.half == nil {
		return nil
	}
	if halfKernel(len(q)) {
		return nil
	}
	qs := make([]float32, len(q))
	for j, x := range q {
		qs[j] = x * 0x1p112
	}
	return qs
}

// halfBits returns the float16 h as a float32 times 2^-112: its
// exponent and mantissa moved to float32's places (a float16 subnormal
// becomes a float32 subnormal), and its sign. Inf and NaN come out
// finite; the rows a store writes hold neither.
func halfBits(h uint16) float32 {
	return math.Float32frombits(uint32(h&0x7fff)<<13 | uint32(h&0x8000)<<16)
}

// dotHalf is Σ qs_j·halfBits(h_j): the dot product of q with the float16
// row h, qs being q scaled by 2^112 (halfQuery).
func dotHalf(qs []float32, h []uint16) float32 {
	h = h[:len(qs)]
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(qs); j += 4 {
		s0 += qs[j] * halfBits(h[j])
		s1 += qs[j+1] * halfBits(h[j+1])
		s2 += qs[j+2] * halfBits(h[j+2])
		s3 += qs[j+3] * halfBits(h[j+3])
	}
	for ; j < len(qs); j++ {
		s0 += qs[j] * halfBits(h[j])
	}
	return (s0 + s1) + (s2 + s3)
}

// count returns the number of live rows.
func (s *snapshot) count() int {
	n := len(s.ids) - s.ndead
	if s.top != nil {
		n += len(s.top.ids)
	}
	return n
}

// each calls f with every live row: the base layer's, then the top's.
func (s *snapshot) each(f func(l *snapshot, i int)) {
	for i := range s.ids {
		if s.dead == nil || !s.dead[i] {
			f(s, i)
		}
	}
	if s.top != nil {
		for i := range s.top.ids {
			f(s.top, i)
		}
	}
}

// find returns the layer and row of a live ID, or nil.
func (s *snapshot) find(id string) (*snapshot, int) {
	if s.top != nil {
		if i, ok := slices.BinarySearch(s.top.ids, id); ok {
			return s.top, i
		}
	}
	if i, ok := slices.BinarySearch(s.ids, id); ok && (s.dead == nil || !s.dead[i]) {
		return s, i
	}
	return nil, 0
}

// removed returns the base IDs that a delta drops: dead, and not in top.
func (s *snapshot) removed() []string {
	var out []string
	for i, id := range s.ids {
		if s.dead != nil && s.dead[i] {
			if l, _ := s.find(id); l == nil {
				out = append(out, id)
			}
		}
	}
	return out
}

// snapRow is one tool's row of a snapshot.
type snapRow struct {
	id, hash, domain, group string
	vec                     []float32 // normalised
}

func (s *snapshot) rowOf(i int) snapRow {
	return snapRow{id: s.ids[i], hash: s.hash[i], domain: s.domain.At(i), group: s.group.At(i), vec: s.row(i)}
}

// flat returns a one-layer snapshot of rows, sorted by ID, its matrix
// float16 as a file holds it (asWritten).
func flat(dims int, rows []snapRow) *snapshot {
	slices.SortFunc(rows, func(a, b snapRow) int { return strings.Compare(a.id, b.id) })
	s := &snapshot{dims: dims, ids: make([]string, len(rows)), hash: make([]string, len(rows)), half: make([]uint16, len(rows)*dims)}
	for i, r := range rows {
		s.ids[i], s.hash[i] = r.id, r.hash
		s.domain.Add(r.domain)
		s.group.Add(r.group)
		for j, x := range r.vec {
			s.half[i*dims+j] = snapfile.Half(x)
		}
	}
	s.signs = snapfile.QuantizeHalf(s.half, len(s.ids), dims)
	return s
}

// patchSnapshot returns old's live rows without the removed ones and
// those of fresh, plus fresh: one layer, sorted by ID. old may be nil.
func patchSnapshot(old *snapshot, dims int, removed []string, fresh []snapRow) *snapshot {
	drop := make(map[string]bool, len(removed)+len(fresh))
	for _, id := range removed {
		drop[id] = true
	}
	for _, r := range fresh {
		drop[r.id] = true
	}
	n := len(fresh)
	if old != nil {
		n += old.count()
	}
	rows := make([]snapRow, 0, n)
	if old != nil {
		old.each(func(l *snapshot, i int) {
			if !drop[l.ids[i]] {
				rows = append(rows, l.rowOf(i))
			}
		})
	}
	return flat(dims, append(rows, fresh...))
}

// withDelta returns s with removed and fresh applied as a delta: the base
// layer is shared (its rows for removed and fresh IDs marked dead), the
// top layer is s's without them, plus fresh. No base row is copied.
func (s *snapshot) withDelta(removed []string, fresh []snapRow) *snapshot {
	gone := make(map[string]bool, len(removed)+len(fresh))
	for _, id := range removed {
		gone[id] = true
	}
	for _, r := range fresh {
		gone[r.id] = true
	}
	dead := make([]bool, len(s.ids))
	copy(dead, s.dead)
	ndead := s.ndead
	for id := range gone {
		if i, ok := slices.BinarySearch(s.ids, id); ok && !dead[i] {
			dead[i] = true
			ndead++
		}
	}
	var rows []snapRow
	if s.top != nil {
		for i, id := range s.top.ids {
			if !gone[id] {
				rows = append(rows, s.top.rowOf(i))
			}
		}
	}
	rows = append(rows, fresh...)
	return &snapshot{id: s.id, dims: s.dims, ids: s.ids, hash: s.hash, domain: s.domain, group: s.group, mat: s.mat, half: s.half, signs: s.signs, sums: s.sums, format: s.format,
		dead: dead, ndead: ndead, top: flat(s.dims, rows)}
}

// snapshot returns the collection's snapshot for a query: the one Sync
// left, else the one read from dir without writing there (readLocked
// without heal). It returns nil for a missing or empty collection, and
// why for one that could not be read.
func (v *Store) snapshot(ctx context.Context, col Collection) (*snapshot, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.snapshotLocked(ctx, col.Name(), false)
}

// snapshotLocked is snapshot with v.mu held; heal is readLocked's.
func (v *Store) snapshotLocked(ctx context.Context, name string, heal bool) (*snapshot, error) {
	if heal && v.unhealed[name] != "" {
		v.readLocked(name, true)
	}
	if s, ok := v.snaps[name]; ok {
		return s, nil
	}
	v.readLocked(name, heal)
	if s := v.snaps[name]; s != nil || v.readOnly {
		return s, nil
	}
	return nil, v.unreadable[name]
}

// buildSnapshot copies a chromem-go collection's vectors into a snapshot,
// rows sorted by ID (a stable order keeps ties deterministic). chromem has
// no listing call: asking for every document by similarity to a unit
// vector returns them all, with their metadata.
func buildSnapshot(ctx context.Context, c *chromem.Collection, dims int) (*snapshot, error) {
	if c == nil || c.Count() == 0 {
		return nil, nil
	}
	unit := make([]float32, dims)
	unit[0] = 1
	res, err := c.QueryEmbedding(ctx, unit, c.Count(), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("read vector collection %s: %w", c.Name, err)
	}
	sort.Slice(res, func(i, j int) bool { return res[i].ID < res[j].ID })
	s := &snapshot{dims: dims, mat: make([]float32, 0, len(res)*dims)}
	for _, r := range res {
		if len(r.Embedding) != dims {
			return nil, fmt.Errorf("vector collection %s: %s has %d dimensions, want %d", c.Name, r.ID, len(r.Embedding), dims)
		}
		s.ids = append(s.ids, r.ID)
		s.hash = append(s.hash, r.Metadata["hash"])
		s.domain.Add(r.Metadata["domain"])
		s.group.Add(r.Metadata["group"])
		s.mat = append(s.mat, r.Embedding...)
	}
	s.signs = snapfile.Quantize(s.mat, len(s.ids), dims)
	return s, nil
}

// dimsOf returns the dimension in a collection name (Collection.Name).
func dimsOf(name string) int {
	n, _ := strconv.Atoi(name[strings.LastIndexByte(name, ':')+1:])
	return n
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

// dot is the dot product of two vectors of the same length, through
// gonum's BLAS (SSE assembly on amd64, plain Go elsewhere; gonum is
// already a dependency of the word-vector generator): 10k
// dot products of 512 dimensions took 0.52 ms against 1.50 ms for a
// four-lane Go loop, and the scan is a third of a hybrid query's CPU.
func dot(a, b []float32) float32 {
	return blas32.Dot(blas32.Vector{N: len(a), Inc: 1, Data: a}, blas32.Vector{N: len(a), Inc: 1, Data: b[:len(a)]})
}

// scanParallelMin is the matrix size (rows × dims) from which a query is
// split across CPUs.
const scanParallelMin = 1 << 20

// query returns the k live rows most similar to q, ties by ID; mode
// chooses each layer's scan (useQuant).
func (s *snapshot) query(q []float32, k int, domain, group string, mode ScanMode) []Hit {
	hits := s.scan(q, k, domain, group, mode)
	if s.top == nil {
		return hits
	}
	hits = append(hits, s.top.scan(q, k, domain, group, mode)...)
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Similarity != b.Similarity {
			if a.Similarity > b.Similarity {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return hits[:min(k, len(hits))]
}

// scan is query over this layer alone.
func (s *snapshot) scan(q []float32, k int, domain, group string, mode ScanMode) []Hit {
	n := len(s.ids)
	parts := 1
	if n*s.dims >= scanParallelMin {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	// A scope no row of this layer has matches nothing here.
	di, dok := s.domain.Find(domain)
	gi, gok := s.group.Find(group)
	if domain != "" && !dok || group != "" && !gok {
		return []Hit{}
	}
	if s.useQuant(mode) {
		var keep func(i int) bool
		if domain != "" || group != "" || s.dead != nil {
			keep = func(i int) bool {
				return !(domain != "" && s.domain.Idx[i] != di || group != "" && s.group.Idx[i] != gi || s.dead != nil && s.dead[i])
			}
		}
		return s.hitsOf(s.scanQuant(q, k, keep))
	}
	qs := s.halfQuery(q)
	tops := make([]topK, parts)
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Add(1)
		go func(t *topK) {
			defer wg.Done()
			t.k = k
			for i := lo; i < hi; i++ {
				if domain != "" && s.domain.Idx[i] != di || group != "" && s.group.Idx[i] != gi || s.dead != nil && s.dead[i] {
					continue
				}
				t.push(i, s.dotRow(q, qs, i))
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
	return s.hitsOf(all)
}

// hitsOf returns the rows of all as hits, most similar first, ties by
// row (by ID).
func (s *snapshot) hitsOf(all topK) []Hit {
	sort.Slice(all.items, func(i, j int) bool {
		if all.items[i].sim != all.items[j].sim {
			return all.items[i].sim > all.items[j].sim
		}
		return all.items[i].row < all.items[j].row
	})
	hits := make([]Hit, len(all.items))
	for i, e := range all.items {
		hits[i] = Hit{ID: s.ids[e.row], Similarity: e.sim}
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
