package search

import (
	"slices"

	"github.com/toolscout/toolscout/index/vector"
)

// domainRanks are the ranks of domains by how well each as a whole (the
// centroid of its tools) matches a request: 1-based, greatest similarity
// first, ties by name, among every domain of the similarities
// (semanticList.domSim). A fusion reads the ranks of its candidates'
// domains only, a hundred or so, so only theirs are found (rank): at 1M
// tools in 10,000 domains, sorting every domain and writing each one's
// rank into a map by name took 2.7 ms of a hybrid search's CPU; finding
// the candidates' ranks, which compares each domain with a few of them,
// takes 0.6 ms (docs/benchmarks/2026-12-06-fusion-1m.md).
type domainRanks struct {
	n      int            // the domains ranked: every domain of the similarities
	byName map[string]int // the rank of each domain given to rank that the similarities hold
	// cand and before are rank's scratch: the domains given, best first,
	// and how many domains of the similarities come before each.
	cand   []rankedDomain
	before []int
}

// rankedDomain is a domain and its similarity to a request.
type rankedDomain struct {
	name string
	sim  float32
}

// of returns domain d's rank, 0 when d is not ranked or when fewer than
// two domains are (a ranking of one domain ranks nothing).
func (r *domainRanks) of(d string) int {
	if r == nil || r.n < 2 {
		return 0
	}
	return r.byName[d]
}

// ranked reports whether the request ranks two domains or more.
func (r *domainRanks) ranked() bool { return r != nil && r.n > 1 }

// rank finds the ranks, among every domain of sim, of the domains doms
// (repeats allowed; those sim lacks get none), forgetting those found
// before. Each domain of sim is compared with the domains of doms sorted
// best first, by a binary search for the first it comes before: the
// domains before a given one are those counted at its place or earlier.
// The order is rankDomains' (bestFirst), so that the ranks are those of
// a sort of every domain.
func (r *domainRanks) rank(sim vector.DomainSims, doms []string) {
	r.reset()
	r.n = sim.Len()
	if r.byName == nil {
		r.byName = map[string]int{}
	}
	for _, d := range doms {
		if _, ok := r.byName[d]; ok {
			continue
		}
		if s, ok := sim.Of(d); ok {
			r.byName[d] = 0
			r.cand = append(r.cand, rankedDomain{d, s})
		}
	}
	if len(r.cand) == 0 {
		return
	}
	slices.SortFunc(r.cand, func(a, b rankedDomain) int { return bestFirst(a.sim, b.sim, a.name, b.name) })
	cand := r.cand
	before := slices.Grow(r.before[:0], len(cand)+1)[:len(cand)+1]
	clear(before)
	last := cand[len(cand)-1]
	for i := range sim.Len() {
		name, s := sim.Name(i), sim.At(i)
		// Most domains of a large catalog come after every candidate.
		if bestFirst(s, last.sim, name, last.name) >= 0 {
			before[len(cand)]++
			continue
		}
		lo, hi := 0, len(cand)-1 // the first candidate name comes before is in [lo, hi]
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if bestFirst(s, cand[mid].sim, name, cand[mid].name) < 0 {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		before[lo]++
	}
	n := 0
	for i, c := range cand {
		n += before[i]
		r.byName[c.name] = n + 1
	}
	r.before = before
}

// reset forgets the ranks found, keeping the memory; no names are kept
// alive.
func (r *domainRanks) reset() {
	r.n = 0
	clear(r.byName)
	clear(r.cand)
	r.cand = r.cand[:0]
}
