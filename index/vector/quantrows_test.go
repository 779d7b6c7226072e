package vector

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/index/vector/snapfile"
)

// TestQuantRows: every row's estimate (and the histogram of them) is
// Σ |q_j| rounded to quantLevels bits over the dimensions where the
// row's sign bit agrees with q's sign, plus 1, computed dimension by
// dimension, by the Go loop and, where it runs, the amd64 kernel, for
// rows of 1 to 17 words (dimensions not a multiple of 64 included) and
// queries with zero words, zero values and no value at all.
func TestQuantRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for dims := 1; dims <= 17*64; dims += 1 + r.IntN(61) {
		for c := range 4 {
			rows := 1 + r.IntN(40)
			mat := make([]float32, rows*dims)
			for i := range mat {
				mat[i] = float32(r.NormFloat64())
			}
			sg := snapfile.Quantize(mat, rows, dims)
			q := make([]float32, dims)
			for j := range q {
				switch {
				case c == 1 && j/64 == 0, c == 2 && r.IntN(3) == 0, c == 3:
					// a zero word, zero values, an all-zero query
				default:
					q[j] = float32(r.NormFloat64())
				}
			}
			want, wantHist := quantRef(sg, mat, rows, dims, q)
			qw, most := quantQuery(sg, q)
			for _, impl := range []struct {
				name string
				run  func(est []uint16, hist []int32) bool
			}{
				{"go", func(est []uint16, hist []int32) bool { quantRowsGo(sg.Bits, sg.Words, qw, est, hist); return true }},
				{"kernel", func(est []uint16, hist []int32) bool { return quantRowsBy(false, sg.Bits, sg.Words, qw, est, hist) }},
				{"avx512", func(est []uint16, hist []int32) bool {
					return hasQuantAVX512 && quantRowsBy(true, sg.Bits, sg.Words, qw, est, hist)
				}},
			} {
				est, hist := make([]uint16, rows), make([]int32, most+2)
				if !impl.run(est, hist) {
					continue
				}
				if !slices.Equal(est, want) || !slices.Equal(hist, wantHist[:most+2]) {
					t.Fatalf("%s: %d rows of %d dims, query case %d: estimates %v, histogram %v; want %v, %v", impl.name, rows, dims, c, est, hist, want, wantHist[:most+2])
				}
			}
		}
	}
	// quantRows, in chunks of quantChunk rows: as the Go loop over all.
	const rows = 2*quantChunk + 5
	sg, qw, most := randomSigns(r, rows, 640)
	want, wantHist := make([]uint16, rows), make([]int32, most+2)
	quantRowsGo(sg.Bits, sg.Words, qw, want, wantHist)
	est, hist := make([]uint16, rows), make([]int32, most+2)
	quantRows(sg.Bits, sg.Words, qw, est, hist)
	if !slices.Equal(est, want) || !slices.Equal(hist, wantHist) {
		t.Fatalf("quantRows of %d rows differs from the Go loop over all of them", rows)
	}
	if !hasQuantKernel {
		t.Log("no quantized-pass kernel on this machine: the Go loop alone was checked")
	} else if !hasQuantAVX512 {
		t.Log("no AVX-512 VPOPCNTQ on this machine: its kernel was not checked")
	}
}

// quantRef is each row's estimate plus 1 and their histogram, dimension
// by dimension.
func quantRef(sg *snapfile.Signs, mat []float32, rows, dims int, q []float32) ([]uint16, []int32) {
	var top float64
	for _, x := range q {
		top = max(top, math.Abs(float64(x)))
	}
	est, hist := make([]uint16, rows), make([]int32, 7*dims+2)
	for i := range rows {
		e := 1
		for j, x := range q {
			if top == 0 {
				break
			}
			m := int(math.Round(math.Abs(float64(x)) / top * 7))
			if (mat[i*dims+j] > sg.Centre[j]) == (x > 0) {
				e += m
			}
		}
		est[i] = uint16(e)
		hist[e]++
	}
	return est, hist
}

// BenchmarkQuantRows estimates 100,000 rows of 640 dimensions (10 words)
// by the Go loop, the kernel and the AVX-512 kernel.
func BenchmarkQuantRows(b *testing.B) {
	const rows = 100000
	sg, qw, most := randomSigns(rand.New(rand.NewPCG(7, 8)), rows, 640)
	est, hist := make([]uint16, rows), make([]int32, most+2)
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			quantRowsGo(sg.Bits, sg.Words, qw, est, hist)
		}
	})
	b.Run("kernel", func(b *testing.B) {
		if !hasQuantKernel {
			b.Skip("no kernel on this machine")
		}
		for b.Loop() {
			quantRowsBy(false, sg.Bits, sg.Words, qw, est, hist)
		}
	})
	b.Run("avx512", func(b *testing.B) {
		if !hasQuantAVX512 {
			b.Skip("no AVX-512 VPOPCNTQ on this machine")
		}
		for b.Loop() {
			quantRowsBy(true, sg.Bits, sg.Words, qw, est, hist)
		}
	})
}

// TestPoolSize: the pool grows with the layer (n/50) up to 10,000 rows,
// never below 500 or 20 per hit asked for.
func TestPoolSize(t *testing.T) {
	for _, c := range []struct{ n, k, want int }{
		{n: 1000, k: 10, want: 500},
		{n: 20000, k: 50, want: 1000},
		{n: 100000, k: 50, want: 2000},
		{n: 500000, k: 50, want: 10000},
		{n: 1000000, k: 50, want: 10000},
		{n: 1000000, k: 1000, want: 20000},
	} {
		if got := poolSize(c.n, c.k); got != c.want {
			t.Errorf("poolSize(%d, %d) = %d, want %d", c.n, c.k, got, c.want)
		}
	}
}

// randomSigns returns rows random sign-bit rows of dims dimensions and
// a random query's words for them.
func randomSigns(r *rand.Rand, rows, dims int) (*snapfile.Signs, []uint64, int) {
	sg := &snapfile.Signs{Words: dims / 64, Bits: make([]uint64, rows*dims/64)}
	for i := range sg.Bits {
		sg.Bits[i] = r.Uint64()
	}
	q := make([]float32, dims)
	for j := range q {
		q[j] = float32(r.NormFloat64())
	}
	qw, most := quantQuery(sg, q)
	return sg, qw, most
}
