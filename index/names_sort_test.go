package index

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSortKeyed: the lookups' radix sort orders keys as the
// comparison sort by hash, then place in the catalog, did: hashes over
// the whole range, hashes shared by many keys, hashes whose upper bytes
// all keys share (the passes it skips), and sizes about its threshold.
func TestRadixSortKeyed(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name string
		hash func() uint64
	}{
		{"whole range", r.Uint64},
		{"shared hashes", func() uint64 { return []uint64{3, 1 << 40, 7 << 56, 0}[r.IntN(4)] }},
		{"low bytes only", func() uint64 { return r.Uint64N(1 << 12) }},
		{"high bytes only", func() uint64 { return r.Uint64N(1<<8) << 56 }},
	} {
		for _, n := range []int{0, 1, 63, 64, 65, 1000, 70_000} {
			t.Run(fmt.Sprintf("%s/%d", c.name, n), func(t *testing.T) {
				ks := make([]keyed, n)
				for i := range ks {
					ks[i] = keyed{c.hash(), int32(i / 3)} // in catalog order, up to 3 keys a tool
				}
				want := slices.Clone(ks)
				slices.SortFunc(want, func(a, b keyed) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.at, b.at)) })
				radixSortKeyed(ks)
				if !slices.Equal(ks, want) {
					for i := range ks {
						if ks[i] != want[i] {
							t.Fatalf("radixSortKeyed: key %d of %d is %+v, want %+v", i, n, ks[i], want[i])
						}
					}
				}
			})
		}
	}
}
