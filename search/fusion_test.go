package search

import (
	"math"
	"testing"
)

func TestFuseRRF(t *testing.T) {
	// k = 60; keyword list [a b c] weight 1, semantic list [c a d] weight 2.
	// a: 1/61 + 2/62; b: 1/62; c: 1/63 + 2/61; d: 2/63.
	got := FuseRRF(60,
		RankedList{IDs: []string{"a", "b", "c"}, Weight: 1},
		RankedList{IDs: []string{"c", "a", "d"}, Weight: 2})
	want := []struct {
		id    string
		score float64
		ranks [2]int
	}{
		{"c", 1.0/63 + 2.0/61, [2]int{3, 1}},
		{"a", 1.0/61 + 2.0/62, [2]int{1, 2}},
		{"d", 2.0 / 63, [2]int{0, 3}},
		{"b", 1.0 / 62, [2]int{2, 0}},
	}
	if len(got) != len(want) {
		t.Fatalf("FuseRRF returned %d results, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.id || math.Abs(g.Score-w.score) > 1e-12 || g.Ranks[0] != w.ranks[0] || g.Ranks[1] != w.ranks[1] {
			t.Errorf("FuseRRF[%d] = %s %.6f %v, want %s %.6f %v", i, g.ID, g.Score, g.Ranks, w.id, w.score, w.ranks)
		}
	}
}

func TestFuseRRFTiesAndDuplicates(t *testing.T) {
	// Equal weights, mirrored lists: a and b tie; a appears first.
	got := FuseRRF(10, RankedList{IDs: []string{"a", "b", "a"}, Weight: 1}, RankedList{IDs: []string{"b", "a"}, Weight: 1})
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Fatalf("FuseRRF = %+v, want a then b", got)
	}
	if want := 1.0/11 + 1.0/12; math.Abs(got[0].Score-want) > 1e-12 {
		t.Errorf("a's score = %f, want %f (the duplicate must not count twice)", got[0].Score, want)
	}
	if got := FuseRRF(60); len(got) != 0 {
		t.Errorf("FuseRRF() = %v, want nothing", got)
	}
}
