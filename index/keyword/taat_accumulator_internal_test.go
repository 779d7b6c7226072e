package keyword

import (
	"math/rand"
	"slices"
	"testing"
)

// TestAccumulatorCollect: the accumulator hands out every touched
// document once, in document order, with its scores summed in the order
// they were added (bit for bit), and is empty for its next use; over
// documents at word edges (63, 64), far apart and dense, across growth.
func TestAccumulatorCollect(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	acc := &accumulator{}
	for round, docs := range [][]uint64{
		{0},
		{63, 64, 0, 127, 128},
		{5, 5, 5, 100000, 3},
		nil,
		{1 << 20, 1<<20 - 1, 65, 64, 63},
	} {
		for range 3 {
			docs = append(docs, uint64(rng.Intn(200000)))
		}
		want := map[uint64]float64{}
		for i, d := range docs {
			s := float64(i+1) / 3
			want[d] += s
			acc.add(d, s)
		}
		got := acc.collect(nil)
		keys := make([]uint64, 0, len(want))
		for d := range want {
			keys = append(keys, d)
		}
		slices.Sort(keys)
		if len(got) != len(keys) {
			t.Fatalf("round %d: collect() = %d documents, want %d", round, len(got), len(keys))
		}
		for i, d := range keys {
			if got[i].doc != d || got[i].score != want[d] {
				t.Errorf("round %d: collect()[%d] = %v, want {%d %v}", round, i, got[i], d, want[d])
			}
		}
		if again := acc.collect(nil); len(again) != 0 {
			t.Errorf("round %d: a second collect() = %v, want nothing", round, again)
		}
		for i, s := range acc.score {
			if s != 0 {
				t.Fatalf("round %d: score[%d] = %v left after collect", round, i, s)
			}
		}
	}
}
