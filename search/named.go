package search

import "github.com/toolscout/toolscout/index"

// domainWords indexes a catalog's domains by the words of their names
// (index.Domain.Words, two letters or more): the domains a request
// names are then found from its own few words, not by reading every
// domain's words for each request (at 100k tools in 2,500 domains that
// read was a third of a hybrid query's fusion time;
// docs/benchmarks/2026-12-06-hybrid-profile.md).
type domainWords struct {
	cat  *index.Catalog
	doms map[string][]string // word → the domains whose name has it
}

// newDomainWords indexes cat's domain names.
func newDomainWords(cat *index.Catalog) *domainWords {
	dw := &domainWords{cat: cat, doms: map[string][]string{}}
	for _, d := range cat.Domains() {
		for _, w := range d.Words() {
			if len(w) < 2 {
				continue
			}
			// A name that repeats a word lists its domain once.
			if l := dw.doms[w]; len(l) == 0 || l[len(l)-1] != d.Name {
				dw.doms[w] = append(l, d.Name)
			}
		}
	}
	return dw
}

// named returns the domains whose name has a word of q ("gitlab" in
// "reopen gitlab issue 14", "aws s3" or "s3" for aws-s3).
func (dw *domainWords) named(q string) map[string]bool {
	out := map[string]bool{}
	for _, w := range index.SplitIdentifier(q) {
		for _, d := range dw.doms[w] {
			out[d] = true
		}
	}
	return out
}

// namedDomains returns the domains of cat whose name the query contains
// as words, through cat's word index (built on first use; a newer
// catalog replaces it).
func (e *Engine) namedDomains(cat *index.Catalog, q string) map[string]bool {
	dw := e.domWords.Load()
	if dw == nil || dw.cat != cat {
		// Two searches of a new catalog may both build it: the same
		// index, and either is kept.
		dw = newDomainWords(cat)
		e.domWords.Store(dw)
	}
	return dw.named(q)
}
