package main

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/internal/ollamafake"
)

// The teacher of these tests knows what the corpus cannot show: it puts
// kittens with trucks ("toys") and puppies with lorries ("pets"), across
// the corpus's two topics. Each word's vector is its group's direction
// plus a little of its own; a sentence's is the mean of its words'.
var teacherGroups = map[string]int{
	"kitten": 0, "truck": 0, "hamster": 0, "bus": 0,
	"puppy": 1, "lorry": 1, "parrot": 1, "van": 1,
	"goldfish": 2, "tractor": 2, "rabbit": 3, "scooter": 3,
}

func teacherVector(input string, dims int) []float32 {
	v := make([]float64, dims)
	for _, w := range strings.Fields(strings.ToLower(input)) {
		g, ok := teacherGroups[w]
		if !ok {
			continue
		}
		v[g] += 1
		h := fnv.New32a()
		h.Write([]byte(w))
		v[4+int(h.Sum32()%uint32(dims-4))] += 0.3
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	out := make([]float32, dims)
	for i, x := range v {
		if n > 0 {
			out[i] = float32(x / math.Sqrt(n))
		}
	}
	return out
}

func corpusFile(t *testing.T, dir string) string {
	topics := [][]string{
		{"kitten", "puppy", "hamster", "parrot", "goldfish", "rabbit"},
		{"truck", "tractor", "bus", "lorry", "van", "scooter"},
	}
	rng := rand.New(rand.NewPCG(7, 7))
	var tsv bytes.Buffer
	tsv.WriteString("name\tsummary\n")
	for i := 0; i < 3000; i++ {
		topic := topics[i%2]
		fmt.Fprintf(&tsv, "p%d\t", i)
		for j := 0; j < 8; j++ {
			fmt.Fprintf(&tsv, "%s ", topic[rng.IntN(len(topic))])
		}
		tsv.WriteString("\n")
	}
	corpus := filepath.Join(dir, "corpus.tsv")
	if err := os.WriteFile(corpus, tsv.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return corpus
}

// Distillation carries the teacher's view into the vectors (kitten near
// truck, though the corpus never puts them together), -keep puts the
// corpus's own vectors beside it, tuning on sentences brings a text's
// mean closer to the teacher's embedding of it, and two builds write the
// same bytes.
func TestDistilFromTeacher(t *testing.T) {
	dir := t.TempDir()
	corpus := corpusFile(t, dir)
	fake := &ollamafake.Server{Models: map[string]int{"teach": 16}, Vector: teacherVector}
	srv := httptest.NewServer(fake)
	defer srv.Close()

	base := config{tsv: multiFlag{corpus + ":summary"}, out: filepath.Join(dir, "count.bin"), vocab: 100, minCount: 2, dims: 4,
		window: 3, alpha: 0.75, power: 0.5, removeTop: 0, iterations: 3, seed: 1}
	if err := run(base); err != nil {
		t.Fatal(err)
	}
	distilled := func(out string, keep float64, sentences int) *embed.WordVectors {
		c := base
		c.teacher, c.ollama, c.vocabFrom, c.out = "teach", srv.URL, base.out, filepath.Join(dir, out)
		c.dims, c.keep, c.sentences, c.epochs, c.rate, c.pull, c.bits = 4, keep, sentences, 8, 0.05, 0.01, 4
		if err := distil(c); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(c.out)
		if err != nil {
			t.Fatal(err)
		}
		wv, err := embed.ReadWordVectors(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return wv
	}
	cos := func(wv *embed.WordVectors, x, y string) float64 { return wordCos(t, wv, x, y) }
	alone := distilled("alone.bin", 0, 0)
	if alone.Dims != 4 || alone.Len() != 12 {
		t.Fatalf("distilled %d words × %d, want the 12 words of the vocabulary × 4", alone.Len(), alone.Dims)
	}
	if toys, pets := cos(alone, "kitten", "truck"), cos(alone, "kitten", "puppi"); toys <= pets+0.3 {
		t.Errorf("distilled: cos(kitten, truck) = %.2f, cos(kitten, puppy) = %.2f: want the teacher's grouping", toys, pets)
	}
	both := distilled("both.bin", 0.5, 0)
	if both.Dims != 8 {
		t.Fatalf("-keep 0.5 gave %d dimensions, want 4 kept + 4 distilled", both.Dims)
	}
	// Half of each: the corpus's topic and the teacher's group both count.
	if c := cos(both, "kitten", "truck"); c <= cos(both, "kitten", "scooter") {
		t.Errorf("-keep 0.5: cos(kitten, truck) = %.2f is not above cos(kitten, scooter) = %.2f", c, cos(both, "kitten", "scooter"))
	}

	c := base
	c.teacher, c.ollama, c.vocabFrom, c.out = "teach", srv.URL, base.out, filepath.Join(dir, "tuned.bin")
	c.dims, c.sentences, c.epochs, c.rate, c.pull = 4, 400, 8, 0.05, 0.01
	c.debian = ""
	old, err := os.ReadFile(base.out)
	if err != nil {
		t.Fatal(err)
	}
	ov, err := embed.ReadWordVectors(bytes.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	vocab := ov.Words()
	counts := make([]uint32, len(vocab))
	W := make([][]float32, len(vocab))
	for i, w := range vocab {
		_, p, _ := ov.Lookup(w)
		counts[i] = uint32(p * 1e6)
		W[i] = teacherVector(w, 16)
	}
	W, project := principal(W, 0, 4)
	before, after, err := tune(c, vocab, counts, W, project)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("tuning on sentences: held-out cosine %.3f before, %.3f after; want it raised", before, after)
	}

	a, _ := os.ReadFile(filepath.Join(dir, "both.bin"))
	distilled("both2.bin", 0.5, 0)
	if b, _ := os.ReadFile(filepath.Join(dir, "both2.bin")); !bytes.Equal(a, b) {
		t.Error("two distillations differ")
	}
}

func TestDistilErrors(t *testing.T) {
	dir := t.TempDir()
	corpus := corpusFile(t, dir)
	base := config{tsv: multiFlag{corpus + ":summary"}, out: filepath.Join(dir, "count.bin"), vocab: 100, minCount: 2, dims: 4,
		window: 3, alpha: 0.75, power: 0.5, removeTop: 0, iterations: 3, seed: 1}
	if err := run(base); err != nil {
		t.Fatal(err)
	}
	fake := &ollamafake.Server{Models: map[string]int{"teach": 16}, Vector: teacherVector}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	down := httptest.NewServer(fake)
	down.Close()
	// A file of two parts, as -keep writes it (and the shipped file is).
	two := base
	two.teacher, two.ollama, two.vocabFrom, two.out, two.bits, two.keep = "teach", srv.URL, base.out, filepath.Join(dir, "two.bin"), 4, 0.5
	if err := distil(two); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		set  func(*config)
		want string
	}{
		{"keep out of range", func(c *config) { c.keep = 1 }, "-keep 1"},
		{"bits", func(c *config) { c.bits = 6 }, "-bits 6: want 8 or 4"},
		{"no such model", func(c *config) { c.teacher = "nope" }, `model "nope" not found`},
		{"teacher down", func(c *config) { c.ollama = down.URL }, "teacher teach at " + down.URL},
		{"too many dimensions", func(c *config) { c.dims = 15; c.removeTop = 2 }, "gives only 16 dimensions"},
		{"no vocabulary file", func(c *config) { c.vocabFrom = filepath.Join(dir, "missing.bin") }, "missing.bin"},
		{"keep of a two-part file", func(c *config) { c.vocabFrom, c.keep = two.out, 0.5 }, "holds vectors of 2 parts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			c.teacher, c.ollama, c.vocabFrom, c.out, c.bits = "teach", srv.URL, base.out, filepath.Join(dir, "out.bin"), 4
			tc.set(&c)
			err := distil(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("distil: %v, want an error saying %q", err, tc.want)
			}
			if _, err := os.Stat(c.out); err == nil {
				t.Error("a failed distillation left an output file")
			}
		})
	}
}
