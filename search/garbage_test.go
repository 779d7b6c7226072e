package search

import (
	"context"
	"runtime"
	"testing"
	"unsafe"

	"github.com/toolscout/toolscout/embed"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/racetest"
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

// TestFusionGarbage: the learned fusion of a hybrid request leaves its
// answer behind and little else: its inputs, the maps that gather them,
// the domains' ranks and coverage, its scores and order are kept between
// searches (fusionScratch). What a fusion allocates beyond its answer
// (the request's words) does not grow with its candidates or the
// catalog's domains; before, its inputs alone were about 250 bytes a
// candidate, and the domains' ranks a map of every domain.
func TestFusionGarbage(t *testing.T) {
	racetest.Plain(t)
	st, err := store.Open("")
	if err != nil {
		t.Fatal(err)
	}
	live, _, err := Open(context.Background(), LiveOptions{Store: st, Embedder: embed.NewBuiltin(embed.BuiltinOptions{})}, synth.Specs(2000, 10, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	eng := live.Engine()
	ctx := context.Background()
	for _, q := range synth.Queries(4, 1) {
		extra := map[int]int{}
		for _, limit := range []int{10, 100} {
			pl, err := eng.plan(Request{Query: q, Limit: limit, Mode: Hybrid})
			if err != nil {
				t.Fatal(err)
			}
			kw, sl, err := eng.hybridLists(ctx, pl)
			if err != nil {
				t.Fatal(err)
			}
			answer := cap(eng.fuseLearned(pl, kw, sl)) * int(unsafe.Sizeof(Result{}))
			const runs = 20
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for range runs {
				eng.fuseLearned(pl, kw, sl)
			}
			runtime.ReadMemStats(&after)
			ranked := sl.domSim.Len()
			eng.putDomainSims(sl)
			pl.ix.inflight.Done()
			bytes := int(after.TotalAlloc-before.TotalAlloc) / runs
			extra[limit] = bytes - answer
			t.Logf("%q, limit %d: %d + %d hits, %d domains ranked; a fusion allocates %d bytes (answer %d) in %d allocations",
				q, limit, len(kw), len(sl.hits), ranked, bytes, answer, int(after.Mallocs-before.Mallocs)/runs)
		}
		if extra[100] > extra[10]+1024 {
			t.Errorf("fuseLearned(%q) allocates %d bytes beyond its answer with limit 100, %d with limit 10: want no more than 1 KB more", q, extra[100], extra[10])
		}
		domainSimsGarbage(t, eng, q)
	}
}

// domainSimsGarbage: the similarities of request q to every domain's
// centroid, which a hybrid search's semantic list carries for the
// fusion (semanticList.domSim), cost a search no more than a few small
// allocations (its normalised vector, its collection's name: at most 5
// allocations, 512 bytes, with the noise of the measure) beyond a semantic list without them: they are written into
// a []float32 the engine keeps between searches (putDomainSims), in the
// snapshot's fixed order of the domains, not into a map by name (with
// 200 domains, a map by name from a sync.Pool, which drops some of what
// is put back (always a share under -race) cost about 1-2 KB a search).
func domainSimsGarbage(t *testing.T, eng *Engine, q string) {
	t.Helper()
	ctx := context.Background()
	pl, err := eng.plan(Request{Query: q, Limit: 10, Mode: Hybrid})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.ix.inflight.Done()
	const runs = 50
	cost := func(domains bool) (bytes, allocs float64, n int) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range runs {
			l, _, err := eng.semanticTools(ctx, pl, domains)
			if err != nil {
				t.Fatal(err)
			}
			n = l.domSim.Len()
			eng.putDomainSims(l)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / runs, float64(after.Mallocs-before.Mallocs) / runs, n
	}
	cost(true) // the engine's buffer made, the domains' order
	withB, withA, n := cost(true)
	withoutB, withoutA, _ := cost(false)
	t.Logf("%q: the semantic list with the similarities of its %d domains: %.0f bytes in %.1f allocations a search; without: %.0f bytes, %.1f allocations",
		q, n, withB, withA, withoutB, withoutA)
	if n < 100 {
		t.Fatalf("%d domains' similarities; want the catalog's 200", n)
	}
	if withB-withoutB > 512 || withA-withoutA > 5 {
		t.Errorf("the similarities of %q to %d domains cost %.0f bytes in %.1f allocations a search; want at most 512 bytes in 5",
			q, n, withB-withoutB, withA-withoutA)
	}
}
