package search

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/synth"
)

// BenchmarkVectorScan measures semantic and hybrid searches with the
// exact vector scan and the quantized one in turn, query by query, in the
// same run: per scan the p50 and p99 latency (ms) and the allocations
// and bytes a search leaves (allocs/op and B/op are those of a pair). The
// built-in embedder, an on-disk store read back as a start reads it, the
// query embedding cache off; TOOLSCOUT_BENCH_SIZES sets the sizes (e.g.
// 100000).
func BenchmarkVectorScan(b *testing.B) {
	queries := synth.Queries(256, 2)
	for _, n := range benchSizes {
		cat, err := synth.Catalog(n, 1)
		if err != nil {
			b.Fatal(err)
		}
		dir := b.TempDir()
		emb := embed.NewBuiltin(embed.BuiltinOptions{})
		// Index into dir, then open it again: the vectors read back from
		// their snapshot file, as a started server reads them.
		first, err := store.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		indexed, _, err := Open(context.Background(), LiveOptions{Store: first, Embedder: emb, CacheSize: -1}, cat.Specs())
		if err != nil {
			b.Fatal(err)
		}
		indexed.Close()
		st, err := store.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		live, _, err := Open(context.Background(), LiveOptions{Store: st, Embedder: emb, CacheSize: -1}, cat.Specs())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { live.Close() })
		eng := live.Engine()
		for _, mode := range []Mode{Semantic, Hybrid} {
			b.Run(fmt.Sprintf("mode=%s/tools=%d", mode, n), func(b *testing.B) {
				b.ReportAllocs()
				scans := []vector.ScanMode{vector.ScanExact, vector.ScanQuantized}
				lat := make([][]float64, len(scans))
				mallocs := make([]uint64, len(scans))
				var ms runtime.MemStats
				for i := 0; b.Loop(); i++ {
					for s, scan := range scans {
						st.Vectors.SetScanMode(scan)
						runtime.ReadMemStats(&ms)
						before := ms.Mallocs
						start := time.Now()
						if _, err := eng.Search(context.Background(), Request{Query: queries[i%len(queries)], Mode: mode, Limit: 10}); err != nil {
							b.Fatal(err)
						}
						lat[s] = append(lat[s], float64(time.Since(start).Microseconds())/1000)
						runtime.ReadMemStats(&ms)
						mallocs[s] += ms.Mallocs - before
					}
				}
				for s, name := range []string{"exact", "quant"} {
					slices.Sort(lat[s])
					b.ReportMetric(lat[s][len(lat[s])/2], name+"-p50-ms")
					b.ReportMetric(lat[s][len(lat[s])*99/100], name+"-p99-ms")
					b.ReportMetric(float64(mallocs[s])/float64(len(lat[s])), name+"-allocs")
				}
			})
		}
	}
}
