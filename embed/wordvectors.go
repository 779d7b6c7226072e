package embed

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// wordVectorsFile holds the learned word vectors of the built-in embedder,
// made by cmd/genvectors (`make wordvectors`): each vector is a half
// learned from co-occurrence in Debian's package descriptions and
// package-registry summaries beside a half distilled from a sentence
// encoder (cmd/genvectors/teacher.go). Format (little-endian):
// "TSWV", a version byte (1), the word count V and dimension D as uint32,
// then V entries of (uvarint length, stem bytes, uint32 corpus count), then
// V·D int8 components, one unit vector per word scaled by 127/max|x|.
//
//go:embed wordvectors.bin
var wordVectorsFile []byte

const wordVectorsMagic = "TSWV\x01"

// WordVectors are unit word vectors keyed by Porter stem, with each word's
// corpus frequency.
type WordVectors struct {
	Dims  int
	index map[string]int32
	vecs  []float32 // V·Dims
	freq  []float32 // relative corpus frequency
}

// Lookup returns the vector and relative corpus frequency of a stem.
func (w *WordVectors) Lookup(stem string) ([]float32, float32, bool) {
	i, ok := w.index[stem]
	if !ok {
		return nil, 0, false
	}
	return w.vecs[int(i)*w.Dims : int(i+1)*w.Dims], w.freq[i], true
}

// Len returns the number of words.
func (w *WordVectors) Len() int { return len(w.freq) }

var builtinWordVectors = sync.OnceValues(func() (*WordVectors, error) {
	return ReadWordVectors(bytes.NewReader(wordVectorsFile))
})

// WriteWordVectors writes vectors in the format ReadWordVectors reads;
// each vector is unit-normalised and quantised to int8.
func WriteWordVectors(w io.Writer, words []string, counts []uint32, vecs [][]float32, dims int) error {
	if len(words) != len(counts) || len(words) != len(vecs) {
		return errors.New("word vectors: words, counts and vectors differ in length")
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(wordVectorsMagic)
	binary.Write(bw, binary.LittleEndian, uint32(len(words)))
	binary.Write(bw, binary.LittleEndian, uint32(dims))
	var tmp [binary.MaxVarintLen64]byte
	for i, word := range words {
		bw.Write(tmp[:binary.PutUvarint(tmp[:], uint64(len(word)))])
		bw.WriteString(word)
		binary.Write(bw, binary.LittleEndian, counts[i])
	}
	q := make([]byte, dims)
	for _, v := range vecs {
		if len(v) != dims {
			return fmt.Errorf("word vectors: a vector has %d components, want %d", len(v), dims)
		}
		var m float64
		for _, x := range v {
			m = math.Max(m, math.Abs(float64(x)))
		}
		for j, x := range v {
			if m > 0 {
				q[j] = byte(int8(math.Round(float64(x) / m * 127)))
			} else {
				q[j] = 0
			}
		}
		bw.Write(q)
	}
	return bw.Flush()
}

// ReadWordVectors reads vectors written by WriteWordVectors.
func ReadWordVectors(r io.Reader) (*WordVectors, error) {
	br := bufio.NewReader(r)
	magic := make([]byte, len(wordVectorsMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != wordVectorsMagic {
		return nil, errors.New("word vectors: not a toolscout word vector file (version 1)")
	}
	var n, dims uint32
	if err := binary.Read(br, binary.LittleEndian, &n); err != nil {
		return nil, fmt.Errorf("word vectors: %w", err)
	}
	if err := binary.Read(br, binary.LittleEndian, &dims); err != nil {
		return nil, fmt.Errorf("word vectors: %w", err)
	}
	if n == 0 || n > 1<<22 || dims == 0 || dims > 4096 {
		return nil, fmt.Errorf("word vectors: implausible size %d × %d", n, dims)
	}
	wv := &WordVectors{Dims: int(dims), index: make(map[string]int32, n), vecs: make([]float32, int(n)*int(dims)), freq: make([]float32, n)}
	var total float64
	counts := make([]uint32, n)
	for i := uint32(0); i < n; i++ {
		l, err := binary.ReadUvarint(br)
		if err != nil || l > 256 {
			return nil, fmt.Errorf("word vectors: word %d: bad length", i)
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("word vectors: word %d: %w", i, err)
		}
		if err := binary.Read(br, binary.LittleEndian, &counts[i]); err != nil {
			return nil, fmt.Errorf("word vectors: word %d: %w", i, err)
		}
		wv.index[string(b)] = int32(i)
		total += float64(counts[i])
	}
	q := make([]byte, dims)
	for i := 0; i < int(n); i++ {
		if _, err := io.ReadFull(br, q); err != nil {
			return nil, fmt.Errorf("word vectors: vector %d: %w", i, err)
		}
		v := wv.vecs[i*int(dims) : (i+1)*int(dims)]
		for j, b := range q {
			v[j] = float32(int8(b))
		}
		normalize(v)
		wv.freq[i] = float32(float64(counts[i]) / total)
	}
	return wv, nil
}

// Words returns the stems, most frequent first.
func (w *WordVectors) Words() []string {
	out := make([]string, len(w.freq))
	for s, i := range w.index {
		out[i] = s
	}
	return out
}

// CorpusFrequency returns a stem's relative frequency in the corpus the
// built-in word vectors were learned from, and whether the stem is in
// their vocabulary. Rare words say more about a text than common ones.
func CorpusFrequency(stem string) (float64, bool) {
	wv, err := builtinWordVectors()
	if err != nil {
		return 0, false
	}
	_, p, ok := wv.Lookup(stem)
	return float64(p), ok
}
