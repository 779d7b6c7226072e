package vector

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sync"
)

// A query of a large collection scans a quantized copy of its vectors
// first, then scores the best few hundred rows it finds exactly from the
// float32 matrix (issue 48): at 100k tools of 640 dimensions the exact
// scan reads 256 MB a query, the quantized one 8 MB.
//
// The quantized copy is one sign bit per dimension of each row, taken
// around the dimension's mean over the layer's rows (centre): bit j of
// row r is set when r[j] > centre[j]. A query q ranks rows by
// q·(r−centre), the same order as q·r (q·centre is the same for every
// row), which the bits estimate as Σ |q_j| × [sign(q_j) agrees with bit
// j]: |q_j| rounded to 4 bits (levels), one bit plane each, so that a
// row's estimate is four popcounts per 64 dimensions, and the words where
// the query is zero (most of the built-in embedder's hashed part) are
// skipped. Measured on the built-in embedder's vectors of synthetic
// tools (docs/benchmarks/2026-12-06-quantized-vectors.md): the exact top
// 10 lies in the estimate's top 500 for 99.6% of queries at 100k tools,
// where plain Hamming distance needs 5,000, and int8 rows scored in Go
// were slower than the exact scan through gonum's assembly.
//
// The bits and centres are written in the snapshot file after the matrix
// (snapfile.go) and so computed once, when a collection is written
// (flat) or read from a file of the earlier format: never by a query.
type signs struct {
	words  int       // uint64 words per row: ceil(dims/64)
	centre []float32 // dims
	bits   []uint64  // rows × words
}

// quantize returns the sign bits of the rows × dims matrix mat.
func quantize(mat []float32, rows, dims int) *signs {
	sg := &signs{words: (dims + 63) / 64, centre: make([]float32, dims)}
	sg.bits = make([]uint64, rows*sg.words)
	if rows == 0 {
		return sg
	}
	sum := make([]float64, dims)
	for i := 0; i < rows; i++ {
		for j, x := range mat[i*dims : (i+1)*dims] {
			sum[j] += float64(x)
		}
	}
	for j := range sum {
		sg.centre[j] = float32(sum[j] / float64(rows))
	}
	for i := 0; i < rows; i++ {
		w := sg.bits[i*sg.words : (i+1)*sg.words]
		for j, x := range mat[i*dims : (i+1)*dims] {
			if x > sg.centre[j] {
				w[j/64] |= 1 << (j % 64)
			}
		}
	}
	return sg
}

// ScanMode chooses how a query scans a collection's vectors.
type ScanMode int

const (
	// ScanAuto scans the quantized rows first, then re-scores the best
	// exactly, when a layer holds at least quantMinRows rows; smaller
	// layers are scanned exactly.
	ScanAuto ScanMode = iota
	// ScanExact scores every row from the float32 matrix: the reference.
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
	quantMinRows = 8192
	// quantPool and quantPoolPerHit size the pool the quantized pass
	// keeps for exact re-scoring: max(quantPool, quantPoolPerHit × k)
	// rows per part of the scan.
	quantPool       = 500
	quantPoolPerHit = 20
	// quantParallelMin is the layer size from which the quantized pass
	// is split across CPUs.
	quantParallelMin = 16384
)

// useQuant reports whether a query of this layer takes the quantized pass.
func (s *snapshot) useQuant(mode ScanMode) bool {
	if s.signs == nil || mode == ScanExact {
		return false
	}
	return mode == ScanQuantized || len(s.ids) >= quantMinRows
}

// qword is one 64-dimension word of a query's quantized form: its sign
// bits and the four bit planes of its rounded magnitudes.
type qword struct {
	at   int
	sign uint64
	p    [4]uint64
}

// quantQuery returns q's words where it is not zero (quantQuery's planes
// all zero elsewhere: those words add nothing to any row's estimate).
func (sg *signs) quantQuery(q []float32) []qword {
	var top float32
	for _, x := range q {
		top = max(top, float32(math.Abs(float64(x))))
	}
	if top == 0 || math.IsNaN(float64(top)) || math.IsInf(float64(top), 0) {
		return nil
	}
	out := make([]qword, 0, sg.words)
	for w := 0; w < sg.words; w++ {
		qw := qword{at: w}
		for j := w * 64; j < min((w+1)*64, len(q)); j++ {
			b := uint64(1) << (j % 64)
			if q[j] > 0 {
				qw.sign |= b
			}
			m := int(math.Round(math.Abs(float64(q[j])) / float64(top) * 15))
			for l := range qw.p {
				if m>>l&1 == 1 {
					qw.p[l] |= b
				}
			}
		}
		if qw.p[0]|qw.p[1]|qw.p[2]|qw.p[3] != 0 {
			out = append(out, qw)
		}
	}
	return out
}

// cand is a row and its estimated score.
type cand struct {
	est int32
	row int32
}

// pool keeps the n rows of highest estimate in a min-heap (no interface,
// no allocation per push).
type pool struct {
	n     int
	items []cand
}

func (p *pool) push(row int, est int32) {
	if len(p.items) < p.n {
		p.items = append(p.items, cand{est, int32(row)})
		for i := len(p.items) - 1; i > 0; {
			parent := (i - 1) / 2
			if p.items[parent].est <= p.items[i].est {
				break
			}
			p.items[parent], p.items[i] = p.items[i], p.items[parent]
			i = parent
		}
		return
	}
	if est <= p.items[0].est {
		return
	}
	p.items[0] = cand{est, int32(row)}
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(p.items) && p.items[l].est < p.items[m].est {
			m = l
		}
		if r := l + 1; r < len(p.items) && p.items[r].est < p.items[m].est {
			m = r
		}
		if m == i {
			break
		}
		p.items[i], p.items[m] = p.items[m], p.items[i]
		i = m
	}
}

// scanQuant is scan's quantized pass: per part of the rows, the pool of
// best estimates, each re-scored exactly into the part's top k.
func (s *snapshot) scanQuant(q []float32, k int, keep func(i int) bool) topK {
	n := len(s.ids)
	parts := 1
	if n >= quantParallelMin {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	qws := s.signs.quantQuery(q)
	size := max(quantPool, quantPoolPerHit*k)
	tops := make([]topK, parts)
	var wg sync.WaitGroup
	for part := 0; part < parts; part++ {
		lo, hi := part*n/parts, (part+1)*n/parts
		wg.Add(1)
		go func(t *topK) {
			defer wg.Done()
			t.k = k
			p := pool{n: size, items: make([]cand, 0, min(size, hi-lo))}
			words, bs := s.signs.words, s.signs.bits
			for i := lo; i < hi; i++ {
				if keep != nil && !keep(i) {
					continue
				}
				row := bs[i*words : (i+1)*words]
				est := 0
				for _, w := range qws {
					a := ^(row[w.at] ^ w.sign)
					est += bits.OnesCount64(a&w.p[0]) + 2*bits.OnesCount64(a&w.p[1]) +
						4*bits.OnesCount64(a&w.p[2]) + 8*bits.OnesCount64(a&w.p[3])
				}
				p.push(i, int32(est))
			}
			// In row order: the file's order (fewer pages touched), and
			// ties kept by ID as the exact scan keeps them.
			slices.SortFunc(p.items, func(a, b cand) int { return int(a.row - b.row) })
			for _, c := range p.items {
				i := int(c.row)
				t.push(i, dot(q, s.mat[i*s.dims:(i+1)*s.dims]))
			}
		}(&tops[part])
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

// Quantized-section layout of a "TSSNAP06" file, after the matrix (which
// starts at a multiple of 64 bytes): dims float32 centres, 0 or 4 zero
// bytes so that the bits start at a multiple of 8, rows × words uint64
// sign bits. quantLayout returns the section's padding and length in
// bytes, ok false when it would not fit in an int64.
func quantLayout(rows, dims int) (pad, total uint64, ok bool) {
	words := uint64(dims+63) / 64
	pad = (8 - (4*uint64(rows)*uint64(dims)+4*uint64(dims))%8) % 8
	hi, lo := bits.Mul64(uint64(rows), 8*words)
	if hi != 0 || lo > math.MaxInt64/2 {
		return 0, 0, false
	}
	return pad, 4*uint64(dims) + pad + lo, true
}
