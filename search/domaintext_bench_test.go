package search

import (
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
