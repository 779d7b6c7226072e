package vector_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

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

// BenchmarkOpenVectors opens a vector store written by a sync and reads
// its collection: what a start does with an unchanged index (the
// snapshot file mapped and checked), at the built-in embedder's 512
// dimensions.
func BenchmarkOpenVectors(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			cat, err := synth.Catalog(n, 1)
			if err != nil {
				b.Fatal(err)
			}
			dir := b.TempDir()
			vs, _ := vector.Open(dir)
			col := vector.Collection{Provider: "bench", Model: "random", Dims: 512}
			if _, err := vs.Sync(context.Background(), col, cat, randomEmbedder{512}, vector.SyncOptions{BatchSize: 1000}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				vs, err := vector.Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				if got := vs.Count(col); got != n {
					b.Fatalf("Count = %d, want %d", got, n)
				}
				if h := vs.Healed(); len(h) > 0 {
					b.Fatalf("healed %q", h)
				}
			}
		})
	}
}
