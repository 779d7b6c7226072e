package search

import (
	"maps"
	"sync"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/synth"
)

// synth3000 is synth.Catalog(3000, 1), built once for the tests that
// only read it (TestNamedDomains, TestCoverageIntoReusesTheMap,
// TestDomainCoverageReusesNoScore): its build was most of each one's
// CPU under -race.
var synth3000 = sync.OnceValues(func() (*index.Catalog, error) { return synth.Catalog(3000, 1) })

// namedDomainsScan is the reference: every domain's words read for the
// request, as namedDomains did before its word index.
func namedDomainsScan(cat *index.Catalog, q string) map[string]bool {
	words := map[string]bool{}
	for _, w := range index.SplitIdentifier(q) {
		words[w] = true
	}
	out := map[string]bool{}
	for _, d := range cat.Domains() {
		for _, w := range d.Words() {
			if len(w) >= 2 && words[w] {
				out[d.Name] = true
				break
			}
		}
	}
	return out
}

// TestNamedDomains: the domains a request names, found through the word
// index, are those every domain's words read one by one give, for
// synthetic requests, requests that are domain names (with one-letter
// and repeated words), and after the catalog is replaced by another.
func TestNamedDomains(t *testing.T) {
	specs, err := index.ParseCatalog("reference servers", []byte(referenceServers))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	large, err := synth3000()
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{}
	for _, cat := range []*index.Catalog{large, ref, large} {
		queries := append(synth.Queries(64, 5), "a b", "s3 s3 aws", "read the memory of the filesystem", "ZZZ nothing")
		for _, d := range cat.Domains()[:min(20, len(cat.Domains()))] {
			queries = append(queries, "use "+d.Name+" now")
		}
		named := 0
		for _, q := range queries {
			got, want := e.namedDomains(cat, q), namedDomainsScan(cat, q)
			if !maps.Equal(got, want) {
				t.Errorf("namedDomains(%q) = %v, want %v", q, got, want)
			}
			named += len(want)
		}
		if named == 0 {
			t.Errorf("no request names a domain of a catalog of %d domains: the test checks nothing", len(cat.Domains()))
		}
	}
}
