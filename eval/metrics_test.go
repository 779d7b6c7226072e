package eval

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestMetrics(t *testing.T) {
	two := &Query{Relevant: []string{"a/x", "b/y"}}
	graded := &Query{Relevant: []string{"a/x", "b/y"}, Grades: map[string]float64{"a/x": 2}}
	one := &Query{Relevant: []string{"a/x"}}
	tests := []struct {
		name               string
		q                  *Query
		ranked             []string
		r1, r5, rr, ndcg10 float64
	}{
		{"first hit at 1", one, []string{"a/x", "c/z"}, 1, 1, 1, 1},
		{"first hit at 3", one, []string{"c/z", "d/w", "a/x"}, 0, 1, 1.0 / 3, 1 / math.Log2(4)},
		{"nothing", one, []string{"c/z"}, 0, 0, 0, 0},
		{"empty ranking", one, nil, 0, 0, 0, 0},
		{"one of two at 2", two, []string{"c/z", "b/y"}, 0, 0.5, 0.5,
			(1 / math.Log2(3)) / (1 + 1/math.Log2(3))},
		{"both, reversed, graded", graded, []string{"b/y", "a/x"}, 0.5, 1, 1,
			(1 + 2/math.Log2(3)) / (2 + 1/math.Log2(3))},
		{"hit past 5", one, []string{"1/1", "2/2", "3/3", "4/4", "5/5", "a/x"}, 0, 0, 1.0 / 6, 1 / math.Log2(7)},
		{"duplicate in ranking counts once", one, []string{"a/x", "a/x"}, 1, 1, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RecallAt(tc.q, tc.ranked, 1); !near(got, tc.r1) {
				t.Errorf("RecallAt(%v, 1) = %f, want %f", tc.ranked, got, tc.r1)
			}
			if got := RecallAt(tc.q, tc.ranked, 5); !near(got, tc.r5) {
				t.Errorf("RecallAt(%v, 5) = %f, want %f", tc.ranked, got, tc.r5)
			}
			if got := ReciprocalRank(tc.q, tc.ranked); !near(got, tc.rr) {
				t.Errorf("ReciprocalRank(%v) = %f, want %f", tc.ranked, got, tc.rr)
			}
			if got := NDCGAt(tc.q, tc.ranked, 10); !near(got, tc.ndcg10) {
				t.Errorf("NDCGAt(%v, 10) = %f, want %f", tc.ranked, got, tc.ndcg10)
			}
		})
	}
}

func TestPairedBootstrap(t *testing.T) {
	mean, lo, hi := PairedBootstrap([]float64{1, 1, 1, 1}, 500, 1)
	if mean != 1 || lo != 1 || hi != 1 {
		t.Errorf("constant diffs: %f [%f, %f], want 1 [1, 1]", mean, lo, hi)
	}
	diffs := []float64{-1, 1, -1, 1, 0, 0, 0.5, -0.5}
	mean, lo, hi = PairedBootstrap(diffs, 2000, 1)
	if !near(mean, 0) || lo >= 0 || hi <= 0 {
		t.Errorf("balanced diffs: %f [%f, %f], want 0 inside the interval", mean, lo, hi)
	}
	m2, lo2, hi2 := PairedBootstrap(diffs, 2000, 1)
	if m2 != mean || lo2 != lo || hi2 != hi {
		t.Error("same seed gave a different interval")
	}
}

func TestPercentile(t *testing.T) {
	if got := percentile([]float64{4, 1, 3, 2}, 50); got != 2.5 {
		t.Errorf("percentile 50 = %f, want 2.5", got)
	}
	if got := percentile([]float64{1, 2, 3, 4, 5}, 95); !near(got, 4.8) {
		t.Errorf("percentile 95 = %f, want 4.8", got)
	}
}
