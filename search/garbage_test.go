package search

import (
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/synth"
)

// TestDomainVectorGarbage: withDomainVector compares the request with
// the domains of its list's tools only, so what it allocates does not
// grow with the catalog's domains (a map of every domain's similarity
// was about 220 KB of each semantic and hybrid search at 100k tools,
// docs/benchmarks/2026-12-06-latency-100k.md).
func TestDomainVectorGarbage(t *testing.T) {
	allocs := func(domains int) float64 {
		t.Helper()
		cat, err := index.NewCatalog(synth.Specs(domains, 1, 1))
		if err != nil {
			t.Fatal(err)
		}
		dv := &domainVectors{cat: cat, vec: map[string][]float32{}}
		for i, d := range cat.Domains() {
			v := make([]float32, 8)
			v[i%8] = 1
			dv.vec[d.Name] = v
		}
		var hits []vector.Hit
		for i, tool := range cat.Tools()[:20] {
			hits = append(hits, vector.Hit{ID: tool.QualifiedName, Similarity: 0.9 - 0.01*float32(i)})
		}
		q := []float32{1, 0.5, 0.25, 0, 0, 0, 0, 0.1}
		return testing.AllocsPerRun(20, func() {
			withDomainVector(semanticList{hits: hits}, cat, dv, q, 0.5)
		})
	}
	if few, many := allocs(40), allocs(4000); many > few {
		t.Errorf("withDomainVector of 20 hits: %v allocations with 4,000 domains, %v with 40; want no more", many, few)
	}
}
