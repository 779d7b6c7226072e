package server

import (
	"fmt"
	"testing"

	"github.com/toolscout/toolscout/internal/synth"
)

// BenchmarkEagerServer measures New in eager mode on synthetic catalogs
// (seed 1): the primary view lists every tool, the exposure's whole
// cost for a view (each mode's list, then one go-sdk AddTool per tool).
func BenchmarkEagerServer(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		cat, err := synth.Catalog(n, 1)
		if err != nil {
			b.Fatal(err)
		}
		live := benchLive(b, cat, nil)
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			for b.Loop() {
				New(Options{Live: live, Expose: Exposure{Mode: ExposeEager}})
			}
		})
	}
}
