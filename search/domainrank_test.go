package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/index/vector"
)

func TestRankDomains(t *testing.T) {
	sim := map[string]float32{"crm": 0.2, "git": 0.9, "aws": 0.2, "mail": -0.1, "docs": 0.5}
	var r domainRanks
	for _, tc := range []struct {
		name string
		sim  map[string]float32
		doms []string
		want map[string]int
	}{
		{"every domain", sim, []string{"crm", "git", "aws", "mail", "docs"}, map[string]int{"git": 1, "docs": 2, "aws": 3, "crm": 4, "mail": 5}},
		{"some, repeated, and one the map lacks", sim, []string{"mail", "jira", "aws", "mail"}, map[string]int{"aws": 3, "mail": 5, "jira": 0, "git": 0}},
		{"after another request: only this one's", map[string]float32{"git": 0.1, "crm": 0.3}, []string{"git", "crm", "docs"}, map[string]int{"crm": 1, "git": 2, "docs": 0, "aws": 0}},
		{"one domain ranks nothing", map[string]float32{"git": 0.1}, []string{"git"}, map[string]int{"git": 0}},
		{"no similarities", nil, []string{"git"}, map[string]int{"git": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.rank(vector.DomainSimsOf(tc.sim), tc.doms)
			for d, want := range tc.want {
				if got := r.of(d); got != want {
					t.Errorf("rank(%v, %v).of(%q) = %d, want %d (by similarity, ties by name)", tc.sim, tc.doms, d, got, want)
				}
			}
			if got, want := r.ranked(), len(tc.sim) > 1; got != want {
				t.Errorf("ranked() = %v, want %v", got, want)
			}
		})
	}
}

// TestDomainRanksAsSort: the ranks of a few domains found without a sort
// are their places in a sort of every domain by similarity, ties by name,
// whichever domains are asked for (the best, the worst, repeats, ties).
func TestDomainRanksAsSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var r domainRanks
	for round := range 300 {
		n := 1 + rng.IntN(300)
		sim := make(map[string]float32, n)
		names := make([]string, 0, n)
		for i := range n {
			d := fmt.Sprintf("d%03d", i)
			// Few distinct values: many ties, broken by name.
			sim[d] = float32(rng.IntN(1+n/10)) / 8
			names = append(names, d)
		}
		sorted := slices.Clone(names)
		slices.SortFunc(sorted, func(a, b string) int { return bestFirst(sim[a], sim[b], a, b) })
		want := make(map[string]int, n)
		for i, d := range sorted {
			want[d] = i + 1
		}
		doms := make([]string, rng.IntN(40))
		for i := range doms {
			doms[i] = names[rng.IntN(n)]
		}
		if round%3 == 0 {
			doms = append(doms, sorted[0], sorted[n-1])
		}
		r.rank(vector.DomainSimsOf(sim), doms)
		for _, d := range doms {
			w := want[d]
			if n < 2 {
				w = 0
			}
			if got := r.of(d); got != w {
				t.Fatalf("round %d, %d domains: rank of %s = %d, want %d (similarity %v)", round, n, d, got, w, sim[d])
			}
		}
	}
}
