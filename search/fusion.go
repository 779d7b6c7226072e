package search

import "sort"

// RankedList is one ranked list of tool IDs, best first, with its weight in
// the fusion.
type RankedList struct {
	IDs    []string
	Weight float64
}

// Fused is one tool's fused score.
type Fused struct {
	ID    string
	Score float64
	// Ranks holds the tool's 1-based rank in each input list (0: absent).
	Ranks []int
	// Parts holds what each input list added to Score.
	Parts []float64
}

// FuseRRF combines ranked lists with weighted Reciprocal Rank Fusion: a
// tool's score is the sum over the lists that hold it of weight/(k+rank),
// rank starting at 1. Ties keep the order in which tools first appear,
// taking the lists in turn.
func FuseRRF(k float64, lists ...RankedList) []Fused {
	return fuseLists(len(lists), func(li int) []string { return lists[li].IDs }, func(li, r int) float64 {
		return lists[li].Weight / (k + float64(r+1))
	})
}

// fuseLists sums each tool's contribution (list li, 0-based rank r) over
// the lists that hold it, keeping a tool's best rank when a list repeats
// it, and sorts by score. Ties keep the order in which tools first appear,
// visiting the lists rank by rank so that first appearance interleaves them.
func fuseLists(n int, ids func(li int) []string, contribution func(li, r int) float64) []Fused {
	byID := map[string]*Fused{}
	var order []*Fused
	maxLen := 0
	for li := 0; li < n; li++ {
		maxLen = max(maxLen, len(ids(li)))
	}
	for r := 0; r < maxLen; r++ {
		for li := 0; li < n; li++ {
			l := ids(li)
			if r >= len(l) {
				continue
			}
			f := byID[l[r]]
			if f == nil {
				f = &Fused{ID: l[r], Ranks: make([]int, n), Parts: make([]float64, n)}
				byID[l[r]] = f
				order = append(order, f)
			}
			if f.Ranks[li] != 0 {
				continue // duplicate within a list: keep the best rank
			}
			f.Ranks[li] = r + 1
			f.Parts[li] = contribution(li, r)
			f.Score += f.Parts[li]
		}
	}
	out := make([]Fused, len(order))
	for i, f := range order {
		out[i] = *f
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// ScoredList is one list of tool IDs with their scores, best first, and its
// weight in the fusion.
type ScoredList struct {
	IDs    []string
	Scores []float64
	Weight float64
}

// FuseConvex combines scored lists by a weighted sum of their min-max
// normalised scores: a tool's score is the sum over the lists that hold it
// of weight·(s − min)/(max − min), so that each list's best counts 1 and
// its last 0, whatever the scale of its raw scores (BM25 or cosine). A
// list whose scores are all equal counts 1 for each of its tools. Ties
// keep the order of first appearance, taking the lists in turn.
func FuseConvex(lists ...ScoredList) []Fused {
	lo := make([]float64, len(lists))
	span := make([]float64, len(lists))
	for li, l := range lists {
		if len(l.Scores) == 0 {
			continue
		}
		mn, mx := l.Scores[0], l.Scores[0]
		for _, s := range l.Scores {
			mn, mx = min(mn, s), max(mx, s)
		}
		lo[li], span[li] = mn, mx-mn
	}
	return fuseLists(len(lists), func(li int) []string { return lists[li].IDs }, func(li, r int) float64 {
		norm := 1.0
		if span[li] > 0 {
			norm = (lists[li].Scores[r] - lo[li]) / span[li]
		}
		return lists[li].Weight * norm
	})
}
