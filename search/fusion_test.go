package search

import (
	"math"
	"reflect"
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

func TestFuseConvex(t *testing.T) {
	// BM25 scores and cosines on different scales: min-max puts each
	// list's best at 1 and its last at 0 before weighting.
	got := FuseConvex(
		ScoredList{IDs: []string{"a", "b", "c"}, Scores: []float64{12, 6, 2}, Weight: 1},
		ScoredList{IDs: []string{"c", "b", "d"}, Scores: []float64{0.9, 0.8, 0.4}, Weight: 2},
	)
	want := map[string]float64{
		"a": 1,
		"b": 0.4 + 2*0.8,
		"c": 0 + 2*1,
		"d": 0,
	}
	order := []string{"c", "b", "a", "d"}
	if len(got) != len(order) {
		t.Fatalf("FuseConvex returned %d tools, want %d", len(got), len(order))
	}
	for i, f := range got {
		if f.ID != order[i] || math.Abs(f.Score-want[f.ID]) > 1e-9 {
			t.Errorf("FuseConvex[%d] = %s %.4f, want %s %.4f", i, f.ID, f.Score, order[i], want[order[i]])
		}
	}
	if r := got[1].Ranks; r[0] != 2 || r[1] != 2 {
		t.Errorf("ranks of b = %v, want [2 2]", r)
	}
	// A list whose scores are all equal counts 1 for each of its tools.
	flat := FuseConvex(ScoredList{IDs: []string{"x", "y"}, Scores: []float64{3, 3}, Weight: 1})
	if flat[0].Score != 1 || flat[1].Score != 1 || flat[0].ID != "x" {
		t.Errorf("FuseConvex of equal scores = %+v", flat)
	}
}

func TestSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"restart the web deployment", []string{"restart the web deployment"}},
		{"First, list my repos. Then open an issue about the crash! Ok.", []string{"First, list my repos", "Then open an issue about the crash"}},
		{"mail Ana the report; book a room for Monday\nand tell the team", []string{"mail Ana the report", "book a room for Monday", "and tell the team"}},
		{"...", nil},
	}
	for _, tc := range tests {
		if got := Sentences(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Sentences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
