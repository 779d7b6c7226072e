// Command genvectors learns the built-in embedder's word vectors from a
// public text corpus: Debian's English package descriptions (what every
// package of the archive does, in one line and a paragraph), plus, when
// given, other one-line software summaries such as npm or PyPI package
// summaries in tab-separated files.
//
// The method is the classic count-based one (Levy, Goldberg and Dagan,
// "Improving distributional similarity with lessons learned from word
// embeddings", TACL 2015): co-occurrence counts of Porter stems in a ±W word
// window, positive pointwise mutual information with context-distribution
// smoothing (α = 0.75), a truncated SVD by randomized subspace iteration,
// and the word vectors U·Σ^p. The common directions of the vectors (their
// mean and top principal components) are removed ("all-but-the-top", Mu and
// Viswanath, ICLR 2018), then each vector is unit-normalised and quantised
// to int8.
//
// The output is deterministic for a given corpus and flags: the random
// test matrix comes from a seeded generator, and every sum is taken in a
// fixed order. The corpus's SHA-256 is printed so that a rebuild can be
// compared with the recorded one (BENCHMARKS.md).
//
// Usage (what `make wordvectors` runs):
//
//	apt-get update -o Acquire::Languages=en
//	go run ./cmd/genvectors -out embed/wordvectors.bin
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/internal/fileio"
	"github.com/toolscout/toolscout/internal/text"
	"gonum.org/v1/gonum/mat"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

type config struct {
	debian     string
	tsv        multiFlag
	out        string
	vocab      int
	minCount   int
	dims       int
	window     int
	alpha      float64
	power      float64
	removeTop  int
	iterations int
	seed       uint64
	teacher    string
	ollama     string
	vocabFrom  string
	keep       float64
	sentences  int
	bits       int
	epochs     int
	rate       float64
	pull       float64
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("genvectors: ")
	var c config
	flag.StringVar(&c.debian, "debian", "/var/lib/apt/lists", "folder of apt's lists holding *_i18n_Translation-en* files (run 'apt-get update -o Acquire::Languages=en' first); empty to skip")
	flag.Var(&c.tsv, "tsv", "FILE:COLUMN, a tab-separated file with a header row and the column holding one summary per line (repeatable)")
	flag.StringVar(&c.out, "out", "embed/wordvectors.bin", "output file")
	flag.IntVar(&c.vocab, "vocab", 24000, "number of words (stems) kept, most frequent first")
	flag.IntVar(&c.minCount, "min-count", 5, "least number of occurrences of a kept word")
	flag.IntVar(&c.dims, "dims", 128, "vector dimension")
	flag.IntVar(&c.window, "window", 5, "co-occurrence window, words each side")
	flag.Float64Var(&c.alpha, "alpha", 0.75, "context distribution smoothing exponent")
	flag.Float64Var(&c.power, "power", 0.5, "singular value exponent p of U·Σ^p")
	flag.IntVar(&c.removeTop, "remove-top", 2, "principal components removed after centring")
	flag.IntVar(&c.iterations, "iterations", 3, "subspace iterations of the randomized SVD")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the random test matrix")
	flag.StringVar(&c.teacher, "teacher", "", "distil the vectors from this embedding model behind Ollama's API instead of learning them from co-occurrence (teacher.go)")
	flag.StringVar(&c.ollama, "ollama", "http://127.0.0.1:11434", "Ollama API address of -teacher")
	flag.StringVar(&c.vocabFrom, "vocab-from", "embed/wordvectors.bin", "with -teacher: the word vector file whose vocabulary and counts are kept")
	flag.Float64Var(&c.keep, "keep", 0, "with -teacher: the share (0 to below 1) of the -vocab-from vectors kept beside the distilled ones, which must then be of one part (written without -teacher); 0 keeps the distilled ones alone")
	flag.IntVar(&c.sentences, "sentences", 0, "with -teacher: tune the distilled vectors on the teacher's embeddings of this many corpus descriptions (tune.go); 0 to skip")
	flag.IntVar(&c.bits, "bits", 4, "with -teacher: bits a component of the distilled vectors is stored with, 8 or 4 (4 keeps the shipped file under 5 MB)")
	flag.IntVar(&c.epochs, "epochs", 8, "with -sentences: passes over the sentences")
	flag.Float64Var(&c.rate, "rate", 0.05, "with -sentences: learning rate")
	flag.Float64Var(&c.pull, "pull", 0.01, "with -sentences: pull of each vector toward its single-word distillation")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: genvectors [flags]\n\nLearns the built-in embedder's word vectors from package descriptions\n(co-occurrence), or with -teacher distils them from an embedding model behind\nOllama's API, keeping -keep of the co-occurrence vectors of -vocab-from beside.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	do := run
	if c.teacher != "" {
		do = distil
	}
	if err := do(c); err != nil {
		log.Fatal(err)
	}
}

func run(c config) error {
	start := time.Now()
	docs, digest, err := readCorpus(c)
	if err != nil {
		return err
	}
	words := 0
	for _, d := range docs {
		words += len(d)
	}
	log.Printf("corpus: %d documents, %d words, sha256 %s", len(docs), words, digest)

	vocab, counts := buildVocab(docs, c.vocab, c.minCount)
	log.Printf("vocabulary: %d stems", len(vocab))
	ids := make(map[string]int32, len(vocab))
	for i, w := range vocab {
		ids[w] = int32(i)
	}
	A := cooccurrence(docs, ids, c.window)
	ppmi(A, c.alpha)
	log.Printf("PPMI matrix: %d non-zero entries (%s)", A.nnz(), time.Since(start).Round(time.Second))

	W := randomizedSVD(A, c.dims, c.power, c.iterations, c.seed)
	removeCommon(W, c.removeTop)
	log.Printf("vectors: %d × %d (%s)", len(vocab), c.dims, time.Since(start).Round(time.Second))

	var buf bytes.Buffer
	if err := embed.WriteWordVectors(&buf, vocab, counts, W, c.dims); err != nil {
		return err
	}
	if err := fileio.WriteFile(c.out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s (%d bytes) in %s", c.out, buf.Len(), time.Since(start).Round(time.Second))
	return nil
}

// readCorpus returns the corpus as documents of stems, and the SHA-256 of
// its raw text in reading order.
func readCorpus(c config) ([][]string, string, error) {
	h := sha256.New()
	var docs [][]string
	seen := map[[32]byte]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" {
			return
		}
		key := sha256.Sum256([]byte(s))
		if seen[key] {
			return // many packages share one description (foo, foo-data, foo-doc)
		}
		seen[key] = true
		io.WriteString(h, s)
		h.Write([]byte{0})
		if d := tokens(s); len(d) > 0 {
			docs = append(docs, d)
		}
	}
	if err := eachText(c, add); err != nil {
		return nil, "", err
	}
	if len(docs) == 0 {
		return nil, "", errors.New("empty corpus: give -debian or -tsv")
	}
	return docs, hex.EncodeToString(h.Sum(nil)), nil
}

// eachText calls add with every description and summary of the corpus, in
// reading order.
func eachText(c config, add func(string)) error {
	if c.debian != "" {
		files, err := filepath.Glob(filepath.Join(c.debian, "*_i18n_Translation-en*"))
		if err != nil {
			return err
		}
		sort.Strings(files)
		if len(files) == 0 {
			return fmt.Errorf("no *_i18n_Translation-en* files in %s: run 'apt-get update -o Acquire::Languages=en' first, or pass -debian ''", c.debian)
		}
		for _, f := range files {
			raw, err := catFile(f)
			if err != nil {
				return err
			}
			n := 0
			debianDescriptions(raw, func(s string) { n++; add(s) })
			log.Printf("%s: %d descriptions", filepath.Base(f), n)
		}
	}
	for _, spec := range c.tsv {
		file, col, ok := strings.Cut(spec, ":")
		if !ok {
			return fmt.Errorf("-tsv %q: want FILE:COLUMN", spec)
		}
		n := 0
		if err := tsvColumn(file, col, func(s string) { n++; add(s) }); err != nil {
			return err
		}
		log.Printf("%s: %d summaries", file, n)
	}
	return nil
}

// catFile returns an apt list file uncompressed (apt stores them lz4- or
// gzip-compressed; apt-helper reads every format apt writes).
func catFile(path string) ([]byte, error) {
	if !strings.HasSuffix(path, ".lz4") && !strings.HasSuffix(path, ".gz") && !strings.HasSuffix(path, ".xz") && !strings.HasSuffix(path, ".zst") {
		return os.ReadFile(path)
	}
	out, err := exec.Command("/usr/lib/apt/apt-helper", "cat-file", path).Output()
	if err != nil {
		return nil, fmt.Errorf("uncompress %s with apt-helper: %w", path, err)
	}
	return out, nil
}

// debianDescriptions calls add with each Description-en of a Translation
// file: the one-line summary and the long description, whose lines start
// with a space and whose paragraph breaks are " .".
func debianDescriptions(raw []byte, add func(string)) {
	var cur strings.Builder
	in := false
	flush := func() {
		if in {
			add(cur.String())
		}
		cur.Reset()
		in = false
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Description-en:"):
			flush()
			in = true
			cur.WriteString(strings.TrimPrefix(line, "Description-en:"))
			cur.WriteString(".\n")
		case in && strings.HasPrefix(line, " "):
			if strings.TrimSpace(line) != "." {
				cur.WriteString(line)
				cur.WriteByte('\n')
			}
		default:
			flush()
		}
	}
	flush()
}

func tsvColumn(file, col string, add func(string)) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	idx := -1
	for line := 0; sc.Scan(); line++ {
		fields := strings.Split(sc.Text(), "\t")
		if line == 0 {
			idx = slices.Index(fields, col)
			if idx < 0 {
				return fmt.Errorf("%s: no column %q in the header %q", file, col, sc.Text())
			}
			continue
		}
		if idx < len(fields) {
			add(fields[idx])
		}
	}
	return sc.Err()
}

// tokens returns the stems of s as the built-in embedder sees them, stop
// words and tokens without a letter left out.
func tokens(s string) []string {
	var out []string
	for _, w := range text.SplitIdentifier(s) {
		if len(w) < 2 || text.Stopword(w) || !hasLetter(w) {
			continue
		}
		out = append(out, text.Stem(w))
	}
	return out
}

func hasLetter(w string) bool {
	for _, r := range w {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// buildVocab keeps the n most frequent stems seen at least minCount times,
// ties broken alphabetically.
func buildVocab(docs [][]string, n, minCount int) ([]string, []uint32) {
	freq := map[string]int{}
	for _, d := range docs {
		for _, w := range d {
			freq[w]++
		}
	}
	words := make([]string, 0, len(freq))
	for w, c := range freq {
		if c >= minCount {
			words = append(words, w)
		}
	}
	words = text.TopWords(words, freq, n)
	counts := make([]uint32, len(words))
	for i, w := range words {
		counts[i] = uint32(min(freq[w], math.MaxUint32))
	}
	return words, counts
}

// csr is a sparse matrix in compressed sparse row form.
type csr struct {
	rows, cols int
	ptr        []int
	col        []int32
	val        []float32
}

func (m *csr) nnz() int { return len(m.val) }

// cooccurrence counts, for each pair of kept words, how often they stand
// within window words of each other, weighted 1/distance (words outside
// the vocabulary are dropped first).
func cooccurrence(docs [][]string, ids map[string]int32, window int) *csr {
	n := len(ids)
	rowMaps := make([]map[int32]float32, n)
	for i := range rowMaps {
		rowMaps[i] = map[int32]float32{}
	}
	seq := make([]int32, 0, 256)
	for _, d := range docs {
		seq = seq[:0]
		for _, w := range d {
			if id, ok := ids[w]; ok {
				seq = append(seq, id)
			}
		}
		for i, a := range seq {
			for d := 1; d <= window && i+d < len(seq); d++ {
				b := seq[i+d]
				if a == b {
					continue
				}
				w := 1 / float32(d)
				rowMaps[a][b] += w
				rowMaps[b][a] += w
			}
		}
	}
	m := &csr{rows: n, cols: n, ptr: make([]int, n+1)}
	for i, rm := range rowMaps {
		keys := make([]int32, 0, len(rm))
		for k := range rm {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			m.col = append(m.col, k)
			m.val = append(m.val, rm[k])
		}
		m.ptr[i+1] = len(m.col)
		rowMaps[i] = nil
	}
	return m
}

// ppmi turns counts into positive PMI with context smoothing α:
// max(0, log(c(w,x)·Σc_α / (c(w)·c_α(x)))).
func ppmi(m *csr, alpha float64) {
	row := make([]float64, m.rows)
	colSum := make([]float64, m.cols)
	var total float64
	for i := 0; i < m.rows; i++ {
		for k := m.ptr[i]; k < m.ptr[i+1]; k++ {
			v := float64(m.val[k])
			row[i] += v
			colSum[m.col[k]] += v
			total += v
		}
	}
	var smoothTotal float64
	smooth := make([]float64, m.cols)
	for j, c := range colSum {
		smooth[j] = math.Pow(c, alpha)
		smoothTotal += smooth[j]
	}
	out := &csr{rows: m.rows, cols: m.cols, ptr: make([]int, m.rows+1)}
	for i := 0; i < m.rows; i++ {
		for k := m.ptr[i]; k < m.ptr[i+1]; k++ {
			j := m.col[k]
			pmi := math.Log(float64(m.val[k]) * smoothTotal / (row[i] * smooth[j]))
			if pmi > 0 {
				out.col = append(out.col, j)
				out.val = append(out.val, float32(pmi))
			}
		}
		out.ptr[i+1] = len(out.col)
	}
	*m = *out
}

// mulDense returns m·x (x has m.cols rows), rows split across the cores;
// each output row is summed by one goroutine in a fixed order.
func (m *csr) mulDense(x *mat.Dense) *mat.Dense {
	_, k := x.Dims()
	out := mat.NewDense(m.rows, k, nil)
	xr := x.RawMatrix()
	or := out.RawMatrix()
	parallelRows(m.rows, func(i int) {
		dst := or.Data[i*or.Stride : i*or.Stride+k]
		for p := m.ptr[i]; p < m.ptr[i+1]; p++ {
			v := float64(m.val[p])
			src := xr.Data[int(m.col[p])*xr.Stride : int(m.col[p])*xr.Stride+k]
			for c := range dst {
				dst[c] += v * src[c]
			}
		}
	})
	return out
}

// mulTDense returns mᵀ·x (x has m.rows rows). Each output row gathers its
// entries through the transposed matrix, so the sums stay in a fixed order.
func (m *csr) mulTDense(x *mat.Dense) *mat.Dense {
	return m.transpose().mulDense(x)
}

func (m *csr) transpose() *csr {
	t := &csr{rows: m.cols, cols: m.rows, ptr: make([]int, m.cols+1), col: make([]int32, len(m.col)), val: make([]float32, len(m.val))}
	for _, c := range m.col {
		t.ptr[c+1]++
	}
	for i := 0; i < m.cols; i++ {
		t.ptr[i+1] += t.ptr[i]
	}
	next := slices.Clone(t.ptr[:m.cols])
	for i := 0; i < m.rows; i++ {
		for k := m.ptr[i]; k < m.ptr[i+1]; k++ {
			c := m.col[k]
			t.col[next[c]] = int32(i)
			t.val[next[c]] = m.val[k]
			next[c]++
		}
	}
	return t
}

func parallelRows(n int, f func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min(n, (w+1)*chunk)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// orthonormal returns an orthonormal basis of y's columns: modified
// Gram-Schmidt, run twice for numerical stability ("twice is enough"). A
// thin QR from gonum would build the full n×n Q first.
func orthonormal(y *mat.Dense) *mat.Dense {
	r, c := y.Dims()
	cols := make([][]float64, c)
	for j := range cols {
		cols[j] = mat.Col(nil, j, y)
	}
	for pass := 0; pass < 2; pass++ {
		for j := range cols {
			for i := 0; i < j; i++ {
				var dot float64
				for k, x := range cols[j] {
					dot += x * cols[i][k]
				}
				for k := range cols[j] {
					cols[j][k] -= dot * cols[i][k]
				}
			}
			var norm float64
			for _, x := range cols[j] {
				norm += x * x
			}
			norm = math.Sqrt(norm)
			if norm < 1e-12 {
				clear(cols[j]) // rank-deficient: leave a zero column
				continue
			}
			for k := range cols[j] {
				cols[j][k] /= norm
			}
		}
	}
	q := mat.NewDense(r, c, nil)
	for j, col := range cols {
		q.SetCol(j, col)
	}
	return q
}

// randomizedSVD returns the rows of U_k·Σ_k^power for the top k singular
// triplets of m (Halko, Martinsson and Tropp 2011, with subspace
// iteration).
func randomizedSVD(m *csr, k int, power float64, iterations int, seed uint64) [][]float32 {
	l := k + 16
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	omega := mat.NewDense(m.cols, l, nil)
	raw := omega.RawMatrix()
	for i := range raw.Data {
		raw.Data[i] = rng.NormFloat64()
	}
	q := orthonormal(m.mulDense(omega))
	for it := 0; it < iterations; it++ {
		z := orthonormal(m.mulTDense(q))
		q = orthonormal(m.mulDense(z))
	}
	// B = Qᵀ·m, as (mᵀ·Q)ᵀ; B·Bᵀ = V·Σ²·Vᵀ gives U = Q·V.
	v, vals := gram(m.mulTDense(q).T()) // ascending
	var u mat.Dense
	u.Mul(q, v)
	rows, _ := u.Dims()
	out := make([][]float32, rows)
	for i := range out {
		out[i] = make([]float32, k)
		for j := 0; j < k; j++ {
			col := l - 1 - j // largest first
			sigma := math.Sqrt(math.Max(vals[col], 0))
			out[i][j] = float32(u.At(i, col) * math.Pow(sigma, power))
		}
	}
	return out
}

// gram returns the eigenvectors (as columns) and eigenvalues, ascending,
// of x·xᵀ.
func gram(x mat.Matrix) (*mat.Dense, []float64) {
	var g mat.SymDense
	g.SymOuterK(1, x)
	var eig mat.EigenSym
	if !eig.Factorize(&g, true) {
		log.Fatal("eigen decomposition failed")
	}
	var v mat.Dense
	eig.VectorsTo(&v)
	return &v, eig.Values(nil)
}

// removeCommon centres the vectors and removes their top d principal
// components, which mostly encode word frequency rather than meaning.
func removeCommon(w [][]float32, d int) {
	if len(w) == 0 {
		return
	}
	k := len(w[0])
	mean := make([]float64, k)
	for _, v := range w {
		for j, x := range v {
			mean[j] += float64(x)
		}
	}
	for j := range mean {
		mean[j] /= float64(len(w))
	}
	x := mat.NewDense(len(w), k, nil)
	for i, v := range w {
		for j := range v {
			x.Set(i, j, float64(v[j])-mean[j])
		}
	}
	if d > 0 {
		vecs, _ := gram(x.T())
		for c := k - 1; c >= k-d && c >= 0; c-- {
			pc := vecs.ColView(c)
			for i := 0; i < len(w); i++ {
				row := x.RowView(i)
				dot := mat.Dot(row, pc)
				for j := 0; j < k; j++ {
					x.Set(i, j, x.At(i, j)-dot*pc.AtVec(j))
				}
			}
		}
	}
	for i := range w {
		for j := range w[i] {
			w[i][j] = float32(x.At(i, j))
		}
	}
}
