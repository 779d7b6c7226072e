package eval

import (
	"math"
	"sort"
)

// RecallAt is |relevant ∩ top k| / |relevant|. ranked holds "domain/tool"
// keys, best first.
func RecallAt(q *Query, ranked []string, k int) float64 {
	if len(q.Relevant) == 0 {
		return 0
	}
	rel := map[string]bool{}
	for _, r := range q.Relevant {
		rel[r] = true
	}
	hit := 0
	for i := 0; i < k && i < len(ranked); i++ {
		if rel[ranked[i]] {
			hit++
			rel[ranked[i]] = false // count each relevant tool once
		}
	}
	return float64(hit) / float64(len(q.Relevant))
}

// ReciprocalRank is 1 / rank of the first relevant tool, 0 if none.
func ReciprocalRank(q *Query, ranked []string) float64 {
	for i, r := range ranked {
		if q.Gain(r) > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// NDCGAt is DCG@k / ideal DCG@k with gain = grade (1 when ungraded) and
// discount log2(rank+1).
func NDCGAt(q *Query, ranked []string, k int) float64 {
	dcg := 0.0
	seen := map[string]bool{}
	for i := 0; i < k && i < len(ranked); i++ {
		if seen[ranked[i]] {
			continue
		}
		seen[ranked[i]] = true
		dcg += q.Gain(ranked[i]) / math.Log2(float64(i+2))
	}
	var gains []float64
	for _, r := range q.Relevant {
		gains = append(gains, q.Gain(r))
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(gains)))
	idcg := 0.0
	for i := 0; i < k && i < len(gains); i++ {
		idcg += gains[i] / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// percentile returns the p-th percentile (0-100) of xs by linear
// interpolation; xs is sorted in place.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	pos := p / 100 * float64(len(xs)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	if lo == hi {
		return xs[lo]
	}
	return xs[lo] + (xs[hi]-xs[lo])*(pos-float64(lo))
}
