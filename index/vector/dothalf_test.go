package vector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/toolscout/toolscout/index/vector/snapfile"
)

// TestDotHalf: a float16 row scores as the dot product of its values
// (snapfile.HalfFloat), by the portable dotHalf and, where it runs, the
// amd64 kernel, at every length from 1 to 70 (the kernel's steps of 16
// and 8 and the values after them), values of every magnitude a unit
// vector holds, float16 subnormals included.
func TestDotHalf(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 1; n <= 70; n++ {
		for range 20 {
			q, h := make([]float32, n), make([]uint16, n)
			var want, mag float64
			for j := range q {
				q[j] = float32(r.NormFloat64() / math.Sqrt(float64(n)))
				h[j] = snapfile.Half(float32(math.Ldexp(r.Float64()*2-1, -r.IntN(20))))
				want += float64(q[j]) * float64(snapfile.HalfFloat(h[j]))
				mag += math.Abs(float64(q[j]) * float64(snapfile.HalfFloat(h[j])))
			}
			tol := 1e-6 * (mag + 1e-30)
			qs := make([]float32, n)
			for j, x := range q {
				qs[j] = x * 0x1p112
			}
			if got := dotHalf(qs, h); math.Abs(float64(got)-want) > tol {
				t.Fatalf("dotHalf of %d values = %v, want %v", n, got, want)
			}
			if !halfKernel(n) {
				continue
			}
			if got := dotHalfKernel(q, h); math.Abs(float64(got)-want) > tol {
				t.Fatalf("dotHalfKernel of %d values = %v, want %v", n, got, want)
			}
		}
	}
	if !halfKernel(640) {
		t.Log("no float16 kernel on this machine: the portable dotHalf alone was checked")
	}
}

// BenchmarkDotHalf scores 1,000 rows of 640 dimensions: float32 through
// gonum, float16 through the portable dotHalf and the amd64 kernel.
func BenchmarkDotHalf(b *testing.B) {
	const dims, rows = 640, 1000
	r := rand.New(rand.NewPCG(1, 2))
	q, m := make([]float32, dims), make([]float32, dims*rows)
	for i := range m {
		m[i] = float32(r.NormFloat64() / 25)
	}
	for i := range q {
		q[i] = float32(r.NormFloat64() / 25)
	}
	h := snapfile.HalfRows(m)
	qs := make([]float32, dims)
	for j, x := range q {
		qs[j] = x * 0x1p112
	}
	var sink float32
	b.Run("float32", func(b *testing.B) {
		for b.Loop() {
			for i := 0; i < rows; i++ {
				sink += dot(q, m[i*dims:(i+1)*dims])
			}
		}
	})
	b.Run("float16-portable", func(b *testing.B) {
		for b.Loop() {
			for i := 0; i < rows; i++ {
				sink += dotHalf(qs, h[i*dims:(i+1)*dims])
			}
		}
	})
	if halfKernel(dims) {
		b.Run("float16-kernel", func(b *testing.B) {
			for b.Loop() {
				for i := 0; i < rows; i++ {
					sink += dotHalfKernel(q, h[i*dims:(i+1)*dims])
				}
			}
		})
	}
	_ = sink
}

// BenchmarkRescorePrefetch scores 4,000 float16 rows scattered over
// 200,000 (256 MB, evicted from the caches before each run) as the
// quantized pass re-scores its pool, asking for the cache lines of the
// row dist rows ahead (0: not at all).
func BenchmarkRescorePrefetch(b *testing.B) {
	const dims, rows, pool = 640, 200000, 4000
	if !halfKernel(dims) {
		b.Skip("no float16 kernel on this machine")
	}
	r := rand.New(rand.NewPCG(1, 2))
	h := make([]uint16, dims*rows)
	for i := range h {
		h[i] = uint16(r.Uint32()&0x3fff) | 0x2000
	}
	q := make([]float32, dims)
	for i := range q {
		q[i] = float32(r.NormFloat64() / 25)
	}
	var sel []int
	for i := 0; i < rows; i++ {
		if r.IntN(rows/pool) == 0 {
			sel = append(sel, i)
		}
	}
	big := make([]byte, 64<<20) // to evict between runs
	for _, dist := range []int{0, 1, 2, 4} {
		b.Run(fmt.Sprintf("dist=%d", dist), func(b *testing.B) {
			var s float32
			for b.Loop() {
				b.StopTimer()
				for i := range big {
					big[i]++
				}
				b.StartTimer()
				for x, i := range sel {
					if dist > 0 && x+dist < len(sel) {
						j := sel[x+dist]
						prefetchHalf(&h[j*dims], dims)
					}
					s += dotHalfKernel(q, h[i*dims:(i+1)*dims])
				}
			}
			_ = s
		})
	}
}
