package main

import (
	"crypto/sha256"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// sifA is the built-in embedder's smoothing of word weights a/(a+p(w))
// (embed/builtin.go).
const sifA = 1e-3

// tune adjusts the distilled word vectors W so that a sentence's weighted
// mean of word vectors, as the built-in embedder forms it, points where the
// teacher's embedding of the whole sentence points (the Tokenlearn recipe:
// static vectors trained on a teacher's sentence embeddings). The
// sentences are c.sentences short package descriptions of the corpus,
// chosen by hash; one in ten is held out to report the fit. The loss is
// the cosine distance plus an L2 pull toward the single-word vectors, by
// stochastic gradient descent from a seeded order.
//
// It returns the mean held-out cosine before and after.
func tune(c config, vocab []string, counts []uint32, W [][]float32, project func([]float32) []float32) (before, after float64, err error) {
	start := time.Now()
	ids := make(map[string]int, len(vocab))
	var total float64
	for i, w := range vocab {
		ids[w] = i
		total += float64(counts[i])
	}
	weight := make([]float32, len(vocab))
	for i := range vocab {
		weight[i] = float32(sifA / (sifA + float64(counts[i])/total))
	}
	type sent struct {
		text  string
		key   [32]byte
		words []int32
	}
	var all []sent
	seen := map[[32]byte]bool{}
	add := func(desc string) {
		line, _, _ := strings.Cut(strings.TrimSpace(desc), "\n")
		line = strings.TrimSuffix(strings.TrimSpace(line), ".")
		key := sha256.Sum256([]byte(line))
		if seen[key] {
			return
		}
		seen[key] = true
		var ws []int32
		for _, st := range tokens(line) {
			if i, ok := ids[st]; ok {
				ws = append(ws, int32(i))
			}
		}
		if len(ws) >= 2 {
			all = append(all, sent{line, key, ws})
		}
	}
	if err := eachText(c, add); err != nil {
		return 0, 0, err
	}
	slices.SortFunc(all, func(a, b sent) int { return slices.Compare(a.key[:], b.key[:]) })
	all = all[:min(len(all), c.sentences)]
	texts := make([]string, len(all))
	h := sha256.New()
	for i, s := range all {
		texts[i] = s.text
		h.Write([]byte(s.text))
		h.Write([]byte{0})
	}
	log.Printf("tune: %d sentences of the corpus, sha256 %x", len(texts), h.Sum(nil))
	if len(all) < 20 {
		return 0, 0, fmt.Errorf("-sentences: the corpus has %d descriptions of two or more known words; want at least 20", len(all))
	}
	tv, err := teacherVectors(c, texts)
	if err != nil {
		return 0, 0, err
	}
	targets := make([][]float32, len(tv))
	for i, t := range tv {
		targets[i] = unit(project(t))
	}
	dims := len(W[0])
	init := make([][]float32, len(W))
	for i := range W {
		init[i] = slices.Clone(W[i])
	}
	held := len(all) / 10
	score := func(lo, hi int) float64 {
		var s float64
		x := make([]float64, dims)
		for i := lo; i < hi; i++ {
			clear(x)
			for _, w := range all[i].words {
				for d, v := range W[w] {
					x[d] += float64(weight[w] * v)
				}
			}
			s += cosine(x, targets[i])
		}
		return s / float64(hi-lo)
	}
	before = score(0, held)
	log.Printf("tune: held-out cosine to the teacher %.4f before", before)
	rng := rand.New(rand.NewPCG(c.seed, 2))
	order := make([]int, len(all)-held)
	for i := range order {
		order[i] = held + i
	}
	x := make([]float64, dims)
	g := make([]float64, dims)
	for epoch := 0; epoch < c.epochs; epoch++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		lr := c.rate * (1 - float64(epoch)/float64(c.epochs))
		for _, i := range order {
			clear(x)
			for _, w := range all[i].words {
				for d, v := range W[w] {
					x[d] += float64(weight[w] * v)
				}
			}
			// Gradient of −cos(x, y) in x: −(y/|x| − cos·x/|x|²), y a unit vector.
			var nx, dot float64
			for d := range x {
				nx += x[d] * x[d]
				dot += x[d] * float64(targets[i][d])
			}
			nx = math.Sqrt(nx)
			if nx == 0 {
				continue
			}
			cos := dot / nx
			for d := range g {
				g[d] = -(float64(targets[i][d])/nx - cos*x[d]/(nx*nx))
			}
			for _, w := range all[i].words {
				a := float64(weight[w])
				for d := range W[w] {
					step := a*g[d] + c.pull*float64(W[w][d]-init[w][d])
					W[w][d] -= float32(lr * step)
				}
			}
		}
		after = score(0, held)
		log.Printf("tune: epoch %d, held-out cosine %.4f (%s)", epoch+1, after, time.Since(start).Round(time.Second))
	}
	return before, after, nil
}

func cosine(x []float64, y []float32) float64 {
	var dot, nx, ny float64
	for d := range x {
		dot += x[d] * float64(y[d])
		nx += x[d] * x[d]
		ny += float64(y[d]) * float64(y[d])
	}
	if nx == 0 || ny == 0 {
		return 0
	}
	return dot / math.Sqrt(nx*ny)
}
