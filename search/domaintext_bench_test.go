package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolscout/toolscout/internal/synth"
)

// BenchmarkDomainText: building the domain index of a catalog (once per
// catalog, at its first search) and one request's coverage, at 10k and
// 100k tools of 100 a domain.
func BenchmarkDomainText(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		cat, err := synth.Catalog(n, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("build/%dk", n/1000), func(b *testing.B) {
			for b.Loop() {
				newDomainText(cat)
			}
		})
		d := newDomainText(cat)
		q := synth.Queries(1, 2)[0]
		b.Run(fmt.Sprintf("coverage/%dk", n/1000), func(b *testing.B) {
			for b.Loop() {
				d.coverage(q)
			}
		})
	}
}

// BenchmarkQueryDomainText: keyword and hybrid requests at 10k tools
// with the domain text (the default) and without (domain_text -1), on
// the same engine, so that the two are measured back to back.
func BenchmarkQueryDomainText(b *testing.B) {
	queries := synth.Queries(256, 2)
	eng := benchEngine(b, 10_000)
	for _, mode := range []Mode{Keyword, Hybrid} {
		for _, c := range []struct {
			name string
			p    *Params
		}{{"on", nil}, {"off", &Params{DomainText: Off}}} {
			b.Run(fmt.Sprintf("mode=%s/domain_text=%s", mode, c.name), func(b *testing.B) {
				i := 0
				for b.Loop() {
					if _, err := eng.Search(context.Background(), Request{Query: queries[i%len(queries)], Mode: mode, Params: c.p}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}
