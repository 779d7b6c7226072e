package main

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"math"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/internal/fileio"
	"github.com/toolscout/toolscout/internal/text"
	"gonum.org/v1/gonum/mat"
)

// distil makes word vectors by distillation from a sentence encoder served
// behind Ollama's API (the Model2Vec recipe, Tulkens and van Dongen 2024):
// every word of the vocabulary is embedded alone by the teacher, the
// vectors are centred, their top principal components removed and the
// next c.dims kept (PCA), and the result is written in the format the
// built-in embedder reads. The built-in embedder weights and averages the
// word vectors of a text as it does for the count-based ones (SIF), so a
// text's learned part approximates the teacher's view of its words
// without running the teacher.
//
// The vocabulary and its corpus counts are kept from -vocab-from (the
// shipped vectors, so that word weights do not change); each stem is sent
// to the teacher as its most frequent surface form in the corpus, or as
// the stem itself when the corpus does not hold it.
func distil(c config) error {
	start := time.Now()
	if c.keep < 0 || c.keep >= 1 {
		return fmt.Errorf("-keep %g: want a share from 0 to below 1", c.keep)
	}
	if c.bits != 8 && c.bits != 4 {
		return fmt.Errorf("-bits %d: want 8 or 4", c.bits)
	}
	raw, err := os.ReadFile(c.vocabFrom)
	if err != nil {
		return err
	}
	old, err := embed.ReadWordVectors(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s: %w", c.vocabFrom, err)
	}
	if c.keep > 0 && old.Parts() > 1 {
		// Kept whole, its distilled part would be kept beside the new one.
		return fmt.Errorf("-keep %g: %s holds vectors of %d parts (a file -teacher wrote, as the shipped one is); -keep keeps the co-occurrence vectors genvectors writes without -teacher: write those first and give them as -vocab-from (make wordvectors does both)", c.keep, c.vocabFrom, old.Parts())
	}
	vocab := old.Words()
	counts := make([]uint32, len(vocab))
	for i, w := range vocab {
		_, p, _ := old.Lookup(w)
		counts[i] = uint32(min(math.Round(float64(p)*1e9), math.MaxUint32))
	}
	surface := surfaceForms(c, vocab)
	inputs := make([]string, len(vocab))
	found := 0
	for i, w := range vocab {
		if s, ok := surface[w]; ok {
			inputs[i] = s
			found++
		} else {
			inputs[i] = w
		}
	}
	log.Printf("vocabulary: %d stems from %s, %d with a surface form from the corpus", len(vocab), c.vocabFrom, found)

	vecs, err := teacherVectors(c, inputs)
	if err != nil {
		return err
	}
	log.Printf("teacher %s: %d vectors of %d dimensions (%s)", c.teacher, len(vecs), len(vecs[0]), time.Since(start).Round(time.Second))
	if k := len(vecs[0]); c.removeTop+c.dims > k {
		return fmt.Errorf("-dims %d with -remove-top %d: the teacher %s gives only %d dimensions", c.dims, c.removeTop, c.teacher, k)
	}
	W, project := principal(vecs, c.removeTop, c.dims)
	if c.sentences > 0 {
		if _, _, err := tune(c, vocab, counts, W, project); err != nil {
			return err
		}
	}
	// The distilled vectors, and with -keep the -vocab-from ones beside
	// them, each a part of its own with its share of the similarity.
	parts := []embed.VectorPart{{Vecs: W, Dims: c.dims, Bits: c.bits, Share: 1 - c.keep}}
	if c.keep > 0 {
		kept := make([][]float32, len(vocab))
		for i, w := range vocab {
			kept[i], _, _ = old.Lookup(w)
		}
		parts = append([]embed.VectorPart{{Vecs: kept, Dims: old.Dims, Bits: 8, Share: c.keep}}, parts...)
	}
	var buf bytes.Buffer
	if err := embed.WriteWordVectorParts(&buf, vocab, counts, parts); err != nil {
		return err
	}
	if err := fileio.WriteFile(c.out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s (%d bytes) in %s", c.out, buf.Len(), time.Since(start).Round(time.Second))
	return nil
}

// surfaceForms returns, for each stem of vocab, the word the corpus spells
// it with most often (ties alphabetically).
func surfaceForms(c config, vocab []string) map[string]string {
	want := make(map[string]bool, len(vocab))
	for _, w := range vocab {
		want[w] = true
	}
	seen := map[string]map[string]int{}
	add := func(s string) {
		for _, w := range text.SplitIdentifier(s) {
			if len(w) < 2 || text.Stopword(w) || !hasLetter(w) {
				continue
			}
			st := text.Stem(w)
			if !want[st] {
				continue
			}
			m := seen[st]
			if m == nil {
				m = map[string]int{}
				seen[st] = m
			}
			m[w]++
		}
	}
	if err := eachText(c, add); err != nil {
		log.Printf("surface forms: %v (stems are sent as they are)", err)
	}
	out := make(map[string]string, len(seen))
	for st, m := range seen {
		best, n := "", 0
		for w, k := range m {
			if k > n || k == n && w < best {
				best, n = w, k
			}
		}
		out[st] = best
	}
	return out
}

// teacherVectors embeds inputs through the Ollama API in batches.
func teacherVectors(c config, inputs []string) ([][]float32, error) {
	u, err := url.Parse(c.ollama)
	if err != nil {
		return nil, fmt.Errorf("-ollama %q: %w", c.ollama, err)
	}
	client := api.NewClient(u, http.DefaultClient)
	const batch = 64
	out := make([][]float32, 0, len(inputs))
	last := time.Now()
	for i := 0; i < len(inputs); i += batch {
		j := min(i+batch, len(inputs))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		resp, err := client.Embed(ctx, &api.EmbedRequest{Model: c.teacher, Input: inputs[i:j]})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("teacher %s at %s: %w", c.teacher, c.ollama, err)
		}
		if len(resp.Embeddings) != j-i {
			return nil, fmt.Errorf("teacher %s: %d vectors for %d inputs", c.teacher, len(resp.Embeddings), j-i)
		}
		for k, v := range resp.Embeddings {
			if len(v) == 0 || len(out) > 0 && len(v) != len(out[0]) || k > 0 && len(v) != len(resp.Embeddings[0]) {
				return nil, fmt.Errorf("teacher %s: a vector of %d dimensions for %q among others of %d", c.teacher, len(v), inputs[i+k], len(resp.Embeddings[0]))
			}
		}
		out = append(out, resp.Embeddings...)
		if time.Since(last) > 10*time.Second {
			log.Printf("teacher: %d of %d words", j, len(inputs))
			last = time.Now()
		}
	}
	return out, nil
}

// principal centres the vectors, removes their top `drop` principal
// components and returns their coordinates on the next `dims`, with the
// function that maps another teacher vector to the same coordinates.
func principal(vecs [][]float32, drop, dims int) ([][]float32, func([]float32) []float32) {
	k := len(vecs[0])
	x := mat.NewDense(len(vecs), k, nil)
	mean := make([]float64, k)
	for i, v := range vecs {
		var n float64
		for _, f := range v {
			n += float64(f) * float64(f)
		}
		n = math.Sqrt(n)
		if n == 0 {
			n = 1
		}
		for j := range v {
			x.Set(i, j, float64(v[j])/n)
			mean[j] += float64(v[j]) / n / float64(len(vecs))
		}
	}
	for i := range vecs {
		row := x.RawRowView(i)
		for j := range row {
			row[j] -= mean[j]
		}
	}
	pcs, _ := gram(x.T()) // ascending eigenvalues: the top ones are last
	cols := make([]int, dims)
	for d := range cols {
		cols[d] = k - 1 - drop - d
	}
	out := make([][]float32, len(vecs))
	for i := range vecs {
		row := x.RawRowView(i)
		v := make([]float32, dims)
		for d, col := range cols {
			var s float64
			for j := 0; j < k; j++ {
				s += row[j] * pcs.At(j, col)
			}
			v[d] = float32(s)
		}
		out[i] = v
	}
	project := func(t []float32) []float32 {
		u := unit(t)
		v := make([]float32, dims)
		for d, col := range cols {
			var s float64
			for j := 0; j < k; j++ {
				s += (float64(u[j]) - mean[j]) * pcs.At(j, col)
			}
			v[d] = float32(s)
		}
		return v
	}
	return out, project
}

func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(n))
	}
	return out
}
