package vector

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime"
	"sync"

	"github.com/toolscout/toolscout/index/vector/snapfile"
)

// A query of a large collection scans a quantized copy of its vectors
// first, then scores the best few hundred rows it finds exactly from the
// matrix (issue 48): at 100k tools of 640 dimensions the exact
// scan reads 128 MB of float16 a query (256 MB as float32), the
// quantized one 8 MB.
//
// The quantized copy is one sign bit per dimension of each row, taken
// around the dimension's mean over the layer's rows (centre): bit j of
// row r is set when r[j] > centre[j]. A query q ranks rows by
// q·(r−centre), the same order as q·r (q·centre is the same for every
// row), which the bits estimate as Σ |q_j| × [sign(q_j) agrees with bit
// j]: |q_j| rounded to quantLevels bits, one bit plane each, so that a
// row's estimate is three popcounts per 64 dimensions (the words where
// the query is zero skipped). The pool of the best estimates (poolSize)
// is then scored exactly. Measured on the built-in embedder's vectors of
// synthetic tools (docs/benchmarks/2026-12-06-quantized-vectors.md):
// with a pool of 2,000 at 100k tools the exact top 10 of all 200 queries
// was found, and 99.3% of the top 50; plain Hamming distance needed a
// pool of 5,000 for 99.7% of the top 10, int8 rows scored in Go were
// slower than the exact scan through gonum's assembly, and a byte lookup
// table per 8 dimensions was as slow as the exact scan.
//
// The bits and centres are written in the snapshot file after the matrix
// (snapfile.Signs, snapfile.Quantize) and so computed once, when a
// collection is written (flat, Sync) or read from a file of the earlier
// format: never by a query.
type signs = snapfile.Signs

// ScanMode chooses how a query scans a collection's vectors.
type ScanMode int

const (
	// ScanAuto scans the quantized rows first, then re-scores the best
	// exactly, when a layer holds at least quantMinRows rows; smaller
	// layers are scanned exactly.
	ScanAuto ScanMode = iota
	// ScanExact scores every row from the matrix: the reference.
	ScanExact
	// ScanQuantized uses the quantized pass at every size (for eval and
	// benchmarks: small catalogs would otherwise be scanned exactly).
	ScanQuantized
)

// ScanEnv is the environment variable that chooses the scan:
// "exact", "quantized", or "auto" (also when unset).
const ScanEnv = "TOOLSCOUT_VECTOR_SCAN"

// ParseScanMode parses a value of ScanEnv.
func ParseScanMode(s string) (ScanMode, error) {
	switch s {
	case "", "auto":
		return ScanAuto, nil
	case "exact":
		return ScanExact, nil
	case "quantized":
		return ScanQuantized, nil
	}
	return ScanAuto, fmt.Errorf("%s=%q: want exact (score every vector), quantized (sign bits first, the best re-scored) or auto (unset: quantized from %d tools)", ScanEnv, s, quantMinRows)
}

// scanModeFromEnv returns the scan ScanEnv asks for.
func scanModeFromEnv() (ScanMode, error) { return ParseScanMode(os.Getenv(ScanEnv)) }

// SetScanMode sets how queries scan the vectors (Open takes it from
// ScanEnv).
func (v *Store) SetScanMode(m ScanMode) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.scan, v.scanErr = m, nil
}

const (
	// quantMinRows is the layer size from which ScanAuto uses the
	// quantized pass: below it the exact scan is as fast (measured,
	// docs/benchmarks/2026-12-06-quantized-vectors.md).
	quantMinRows = 4096
	// quantPool, quantPoolPerHit, quantPoolShare and quantPoolMax size
	// the pool the quantized pass keeps for exact re-scoring (poolSize).
	quantPool       = 500
	quantPoolPerHit = 20
	quantPoolShare  = 50
	quantPoolMax    = 10000
	// quantParallelMin is the layer size from which the quantized pass
	// is split across CPUs.
	quantParallelMin = 16384
)

// useQuant reports whether a query of this layer takes the quantized pass.
func (s *snapshot) useQuant(mode ScanMode) bool {
	if s.signs == nil || len(s.ids) == 0 || mode == ScanExact {
		return false
	}
	if s.dims > quantMaxDims {
		return false
	}
	return mode == ScanQuantized || len(s.ids) >= quantMinRows
}

// quantLevels is the number of bits a query's magnitudes are rounded to:
// 3 found the exact top 10 as often as 4 (99.65% in a pool of 500 at 20k
// tools) with three popcounts a word instead of four; 2 found 99.45%, 1
// (a masked Hamming distance) 94.6%.
const quantLevels = 3

// quantMaxDims bounds the dimensions the quantized pass takes: a row's
// estimate, at most (2^quantLevels − 1) × dims, is kept in 16 bits.
const quantMaxDims = (1<<16 - 2) / (1<<quantLevels - 1)

// quantQuery returns q's quantized form for scanning sg's rows: for each
// of a row's words, four: its sign bits and the bit planes of its
// rounded magnitudes (zero where q is zero: such a word adds nothing to
// any row's estimate); and the highest estimate a row can get. All zero
// when q has no finite value above zero (every row's estimate is 0).
func quantQuery(sg *signs, q []float32) ([]uint64, int) {
	out := make([]uint64, 4*sg.Words)
	var top float64
	for _, x := range q {
		top = max(top, math.Abs(float64(x)))
	}
	if top == 0 || math.IsNaN(top) || math.IsInf(top, 0) {
		return out, 0
	}
	const levels = 1<<quantLevels - 1
	most := 0
	for j, x := range q[:min(len(q), 64*sg.Words)] {
		w, b := out[4*(j/64):4*(j/64)+4], uint64(1)<<(j%64)
		if x > 0 {
			w[0] |= b
		}
		m := int(math.Round(math.Abs(float64(x)) / top * levels))
		most += m
		for l := range quantLevels {
			if m>>l&1 == 1 {
				w[1+l] |= b
			}
		}
	}
	return out, most
}

// quantRows writes est[i] = 1 + the estimate of row i of bs (len(est)
// rows of words uint64) against the quantized query qw (quantQuery) and
// counts hist[est[i]]++: by the kernel where the CPU has one
// (quantrows_amd64.go), else in Go.
//
// The kernel is called quantChunk rows at a time: the runtime does not
// preempt assembly, and half of a million rows in one call would hold
// off a garbage collection's stop for the whole pass (about 10 ms on a
// loaded machine), where a chunk takes a fraction of a millisecond.
func quantRows(bs []uint64, words int, qw []uint64, est []uint16, hist []int32) {
	for len(est) > 0 {
		c := min(len(est), quantChunk)
		if !quantRowsKernel(bs[:c*words], words, qw, est[:c], hist) {
			quantRowsGo(bs[:c*words], words, qw, est[:c], hist)
		}
		bs, est = bs[c*words:], est[c:]
	}
}

// quantChunk is the number of rows quantRows gives the kernel at once.
const quantChunk = 8192

// quantRowsGo is quantRows in Go.
func quantRowsGo(bs []uint64, words int, qw []uint64, est []uint16, hist []int32) {
	qw = qw[:4*words]
	for i := range est {
		row := bs[i*words : (i+1)*words]
		e := 1
		for j, r := range row {
			w := qw[4*j : 4*j+4]
			a := ^(r ^ w[0])
			e += bits.OnesCount64(a&w[1]) + 2*bits.OnesCount64(a&w[2]) + 4*bits.OnesCount64(a&w[3])
		}
		est[i] = uint16(e)
		hist[e]++
	}
}

// poolSize is the number of rows of the n in a layer the quantized pass
// re-scores exactly for a query of k: max(quantPool, quantPoolPerHit × k,
// min(n / quantPoolShare, quantPoolMax)).
//
// The pool a recall needs grows far slower than the layer: on the
// built-in embedder's vectors of benchscale's synthetic tools, 100
// requests, the best 5,000 estimates held all of the exact top 10 at
// 100k tools and at 1M, and 99.98% and 99.76% of the top 50; the best
// 10,000 at 1M 100% and 99.90% (the worst request 48 of its 50), where
// n/50 (20,000) re-scored twice the rows for the last 0.1%
// (docs/benchmarks/2026-12-06-1m-semantic.md). Above 1M tools the cap is
// not measured.
func poolSize(n, k int) int {
	return max(quantPool, quantPoolPerHit*k, min(n/quantPoolShare, quantPoolMax))
}

// quantScratch is a query's working memory, reused (quantScratches).
type quantScratch struct {
	est  []uint16  // per row: 0 left out, else 1 + its estimate
	hist [][]int32 // per part: rows per value of est
	pool [][]int32 // per part: the rows re-scored
}

var quantScratches = sync.Pool{New: func() any { return new(quantScratch) }}

// scanQuant is scan's quantized pass: every row kept (keep; nil keeps
// all) gets its estimate, the pool of the best max(quantPool,
// quantPoolPerHit × k) estimates (ties at the cut in row order) is
// re-scored exactly, and the k best returned. The rows are split across
// CPUs from quantParallelMin.
func (s *snapshot) scanQuant(q []float32, k int, keep func(i int) bool) topK {
	n := len(s.ids)
	parts := 1
	if n >= quantParallelMin {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	qws, most := quantQuery(s.signs, q)
	sc := quantScratches.Get().(*quantScratch)
	defer quantScratches.Put(sc)
	if cap(sc.est) < n {
		sc.est = make([]uint16, n)
	}
	est := sc.est[:n]
	for len(sc.hist) < parts {
		sc.hist = append(sc.hist, nil)
	}
	var wg sync.WaitGroup
	for part := 0; part < parts; part++ {
		lo, hi := part*n/parts, (part+1)*n/parts
		if cap(sc.hist[part]) < most+2 {
			sc.hist[part] = make([]int32, most+2)
		}
		hist := sc.hist[part][:most+2]
		clear(hist)
		wg.Add(1)
		go func() {
			defer wg.Done()
			words, bs := s.signs.Words, s.signs.Bits
			if keep == nil {
				quantRows(bs[lo*words:hi*words], words, qws, est[lo:hi], hist)
				return
			}
			// The rows kept, a run of them at a time (a domain's rows are
			// one run: IDs begin with the domain).
			for i := lo; i < hi; {
				if !keep(i) {
					est[i] = 0
					i++
					continue
				}
				j := i + 1
				for j < hi && keep(j) {
					j++
				}
				quantRows(bs[i*words:j*words], words, qws, est[i:j], hist)
				i = j
			}
		}()
	}
	wg.Wait()
	// The cut: the lowest estimate cut such that the rows above it and
	// those at it make the pool; of those at it, the first (by row) take
	// what is left.
	size := poolSize(n, k)
	cut, above := most+1, 0
	for ; cut > 1; cut-- {
		at := 0
		for _, h := range sc.hist[:parts] {
			at += int(h[cut])
		}
		if above+at >= size {
			break
		}
		above += at
	}
	// How many rows at the cut each part takes, in row order.
	atCut := make([]int, parts)
	left := size - above
	for part := range atCut {
		take := min(left, int(sc.hist[part][cut]))
		atCut[part], left = take, left-take
	}
	qs := s.halfQuery(q)
	tops := make([]topK, parts)
	for len(sc.pool) < parts {
		sc.pool = append(sc.pool, nil)
	}
	for part := 0; part < parts; part++ {
		lo, hi := part*n/parts, (part+1)*n/parts
		wg.Add(1)
		go func(t *topK, take int, pool *[]int32) {
			defer wg.Done()
			if cap(*pool) < size {
				*pool = make([]int32, 0, size) // at most the pool: no growth
			}
			rows := (*pool)[:0]
			for i := lo; i < hi; i++ {
				e := int(est[i])
				if e < cut || e == 0 {
					continue
				}
				if e == cut {
					if take == 0 {
						continue
					}
					take--
				}
				rows = append(rows, int32(i))
			}
			*pool = rows
			t.k = k
			s.rescore(q, qs, rows, t)
		}(&tops[part], atCut[part], &sc.pool[part])
	}
	wg.Wait()
	all := tops[0]
	for _, t := range tops[1:] {
		for _, e := range t.items {
			all.push(e.row, e.sim)
		}
	}
	return all
}

// rescorePrefetch is how many rows ahead rescore asks for a float16
// row's cache lines: the pool's rows are scattered over the matrix (one
// in 50), so the hardware prefetcher does not see the next one coming,
// and the kernel waited on memory for most of a row's time (measured:
// docs/benchmarks/2026-12-06-1m-semantic.md).
const rescorePrefetch = 2

// rescore pushes the exact similarity of each of rows (ascending) into t.
func (s *snapshot) rescore(q, qs []float32, rows []int32, t *topK) {
	if s.half == nil || qs != nil || !halfKernel(s.dims) {
		for _, i := range rows {
			t.push(int(i), s.dotRow(q, qs, int(i)))
		}
		return
	}
	d := s.dims
	for x, i := range rows {
		if x+rescorePrefetch < len(rows) {
			j := int(rows[x+rescorePrefetch])
			prefetchHalf(&s.half[j*d], d)
		}
		t.push(int(i), dotHalfKernel(q, s.half[int(i)*d:(int(i)+1)*d]))
	}
}
