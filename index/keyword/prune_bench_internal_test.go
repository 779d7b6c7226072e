package keyword

import (
	"context"
	"os"
	"testing"

	"github.com/toolscout/toolscout/internal/synth"
)

// BenchmarkPrunedSum runs 200 synthetic queries (Size 50) on a built
// keyword index, as hybrid sends them (whole, no fuzzy clause) and as
// keyword mode does (divided, fuzzy), with the full sum and the pruned
// one. The index is a data dir's, read-only:
// TOOLSCOUT_BENCH_KEYWORD_INDEX=DATA/sets/ID/keyword.bleve (benchscale
// -work keeps one); skipped without it.
func BenchmarkPrunedSum(b *testing.B) {
	path := os.Getenv("TOOLSCOUT_BENCH_KEYWORD_INDEX")
	if path == "" {
		b.Skip("TOOLSCOUT_BENCH_KEYWORD_INDEX is not set")
	}
	kw, err := OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer kw.Close()
	qs := synth.Queries(200, 2)
	for _, mode := range []struct {
		name string
		q    Query
	}{
		{"hybrid", Query{Size: 50}},
		{"keyword", Query{Size: 50, Fuzzy: 0.2, Divide: true}},
	} {
		for _, full := range []bool{true, false} {
			name := mode.name + "/pruned"
			if full {
				name = mode.name + "/full"
			}
			b.Run(name, func(b *testing.B) {
				kw.fullSum = full
				defer func() { kw.fullSum = false }()
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					q := mode.q
					q.Text = qs[i%len(qs)]
					if _, err := kw.Search(context.Background(), q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
