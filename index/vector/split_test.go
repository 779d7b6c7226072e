package vector

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestSplitScansSameAnswer: a layer large enough for both scans to be
// split across CPUs (the exact one from scanParallelMin floats, the
// quantized pass from quantParallelMin rows) answers every query, scoped
// or not, exactly as the same scan in one part does: the same tools with
// the same similarities in the same order, the quantized pass's ties at
// its cut taken in row order whatever the parts. Cheap enough for -race,
// which checks the parts' goroutines (TestQuantizedRecall, which also
// splits, runs without it: make unit).
func TestSplitScansSameAnswer(t *testing.T) {
	const dims = 64
	n := max(quantParallelMin, scanParallelMin/dims) + 1000
	r := rand.New(rand.NewPCG(1, 2))
	vec := func() []float32 {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		return normalized(v)
	}
	rows := make([]snapRow, n)
	for i := range rows {
		d := fmt.Sprintf("d%d", i%4)
		rows[i] = snapRow{id: fmt.Sprintf("%s__t%05d", d, i), hash: "h", domain: d, group: "g", vec: vec()}
	}
	s := flat(dims, rows)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for i := range 8 {
		q := vec()
		for _, k := range []int{10, 50} {
			for _, domain := range []string{"", "d2"} {
				for mode, name := range map[ScanMode]string{ScanExact: "exact", ScanQuantized: "quantized"} {
					runtime.GOMAXPROCS(1)
					one := s.query(q, k, domain, "", mode)
					runtime.GOMAXPROCS(4)
					split := s.query(q, k, domain, "", mode)
					if len(one) != k || !slices.Equal(split, one) {
						t.Fatalf("query %d, k=%d, domain %q, %s scan: in 4 parts %v,\nin one %v", i, k, domain, name, split, one)
					}
				}
			}
		}
	}
}
