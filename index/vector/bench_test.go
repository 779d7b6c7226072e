package vector_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index/vector"
	"github.com/toolscout/toolscout/internal/synth"
)

type randomEmbedder struct{ dims int }

func (r randomEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	rng := rand.New(rand.NewSource(int64(len(texts))))
	out := make([][]float32, len(texts))
	for i := range out {
		v := make([]float32, r.dims)
		for j := range v {
			v[j] = rng.Float32() - 0.5
		}
		out[i] = v
	}
	return out, nil
}

// BenchmarkVectorQuery compares chromem-go's query path with the snapshot
// scan toolscout uses, at 384 dimensions (the built-in embedder's size).
func BenchmarkVectorQuery(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		cat, err := synth.Catalog(n, 1)
		if err != nil {
			b.Fatal(err)
		}
		vs, _ := vector.Open("")
		col := vector.Collection{Provider: "bench", Model: "random", Dims: 384}
		if _, err := vs.Sync(context.Background(), col, cat, randomEmbedder{384}, vector.SyncOptions{BatchSize: 500}); err != nil {
			b.Fatal(err)
		}
		q, _ := randomEmbedder{384}.EmbedDocuments(context.Background(), []string{"q"})
		for _, path := range []string{"chromem", "snapshot"} {
			b.Run(fmt.Sprintf("path=%s/tools=%d", path, n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					var err error
					if path == "chromem" {
						_, err = vs.QueryChromem(context.Background(), col, q[0], 50, "", "")
					} else {
						_, err = vs.Query(context.Background(), col, q[0], 50, "", "")
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchCol is the collection the benchmarks write: the built-in
// embedder's 512 dimensions.
var benchCol = vector.Collection{Provider: "bench", Model: "random", Dims: 512}

// syncedDir returns a folder holding a vector store of n synthetic tools
// in benchCol, written by a sync.
func syncedDir(b *testing.B, n int) string {
	cat, err := synth.Catalog(n, 1)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	vs, _ := vector.Open(dir)
	if _, err := vs.Sync(context.Background(), benchCol, cat, randomEmbedder{512}, vector.SyncOptions{BatchSize: 1000}); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkOpenVectors opens a vector store written by a sync and reads
// its collection: what a start does with an unchanged index (the
// snapshot file mapped and checked), at the built-in embedder's 512
// dimensions.
func BenchmarkOpenVectors(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			dir := syncedDir(b, n)
			b.ResetTimer()
			for b.Loop() {
				vs, err := vector.Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				if got := vs.Count(benchCol); got != n {
					b.Fatalf("Count = %d, want %d", got, n)
				}
				if h := vs.Healed(); len(h) > 0 {
					b.Fatalf("healed %q", h)
				}
			}
		})
	}
}

// BenchmarkQueryOpened queries a vector store opened from its files, as a
// started server does (the matrix read from the snapshot file), at the
// built-in embedder's 512 dimensions.
func BenchmarkQueryOpened(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			vs, _ := vector.Open(syncedDir(b, n))
			q, _ := randomEmbedder{512}.EmbedDocuments(context.Background(), []string{"q"})
			if vs.Count(benchCol) != n {
				b.Fatalf("Count = %d, want %d", vs.Count(benchCol), n)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := vs.Query(context.Background(), benchCol, q[0], 10, "", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScanModes queries the built-in embedder's vectors of synthetic
// tools (read back from the snapshot file, as a started server does) by
// the exact scan and the quantized one in turn, query by query, and
// reports each one's p50 and p99 (µs) and the allocations of a pair: the
// two side by side in the same conditions. TOOLSCOUT_BENCH_SIZES replaces
// the sizes (e.g. 100000).
func BenchmarkScanModes(b *testing.B) {
	sizes := []int{2000, 4000, 8000, 16000, 32000}
	if env := os.Getenv("TOOLSCOUT_BENCH_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("TOOLSCOUT_BENCH_SIZES=%q: %v", env, err)
			}
			sizes = append(sizes, n)
		}
	}
	ctx := context.Background()
	emb := embed.NewBuiltin(embed.BuiltinOptions{})
	var qs [][]float32
	for _, q := range synth.Queries(256, 2) {
		v, err := emb.EmbedQuery(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		qs = append(qs, v)
	}
	col := vector.Collection{Provider: "builtin", Model: emb.Info().Model, Dims: len(qs[0])}
	for _, n := range sizes {
		cat, err := synth.Catalog(n, 1)
		if err != nil {
			b.Fatal(err)
		}
		dir := b.TempDir()
		vs, _ := vector.Open(dir)
		if _, err := vs.Sync(ctx, col, cat, emb, vector.SyncOptions{BatchSize: 1000}); err != nil {
			b.Fatal(err)
		}
		vs, _ = vector.Open(dir)
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			modes := []vector.ScanMode{vector.ScanExact, vector.ScanQuantized}
			lat := make([][]float64, len(modes))
			for i := 0; b.Loop(); i++ {
				for m, mode := range modes {
					vs.SetScanMode(mode)
					start := time.Now()
					if _, err := vs.Query(ctx, col, qs[i%len(qs)], 50, "", ""); err != nil {
						b.Fatal(err)
					}
					lat[m] = append(lat[m], float64(time.Since(start).Nanoseconds())/1000)
				}
			}
			for m, name := range []string{"exact", "quant"} {
				slices.Sort(lat[m])
				b.ReportMetric(lat[m][len(lat[m])/2], name+"-p50-µs")
				b.ReportMetric(lat[m][len(lat[m])*99/100], name+"-p99-µs")
			}
		})
	}
}
