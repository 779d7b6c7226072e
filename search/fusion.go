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
}

// FuseRRF combines ranked lists with weighted Reciprocal Rank Fusion: a
// tool's score is the sum over the lists that hold it of weight/(k+rank),
// rank starting at 1. Ties keep the order in which tools first appear,
// taking the lists in turn.
func FuseRRF(k float64, lists ...RankedList) []Fused {
	byID := map[string]*Fused{}
	var order []*Fused
	maxLen := 0
	for _, l := range lists {
		maxLen = max(maxLen, len(l.IDs))
	}
	// Visit rank by rank so that first appearance interleaves the lists.
	for r := 0; r < maxLen; r++ {
		for li, l := range lists {
			if r >= len(l.IDs) {
				continue
			}
			id := l.IDs[r]
			f := byID[id]
			if f == nil {
				f = &Fused{ID: id, Ranks: make([]int, len(lists))}
				byID[id] = f
				order = append(order, f)
			}
			if f.Ranks[li] != 0 {
				continue // duplicate within a list: keep the best rank
			}
			f.Ranks[li] = r + 1
			f.Score += l.Weight / (k + float64(r+1))
		}
	}
	out := make([]Fused, len(order))
	for i, f := range order {
		out[i] = *f
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}
