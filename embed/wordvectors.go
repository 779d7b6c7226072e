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
// made by cmd/genvectors (`make wordvectors`): each vector is a part
// learned from co-occurrence in Debian's package descriptions and
// package-registry summaries beside a part distilled from a sentence
// encoder (cmd/genvectors/teacher.go). Format (little-endian): "TSWV", a
// version byte (2), the word count V as uint32 and the number of parts P
// as a byte; per part its dimension D (uint32), its bits per component
// (8 or 4, a byte) and its share of the similarity (float32); then V
// entries of (uvarint length, stem bytes, uint32 corpus count); then, per
// part, V vectors of D components, each scaled by 127/max|x| into int8 or
// by 7/max|x| into a 4-bit signed nibble (two a byte, low one first, +8).
// A word's vector is its parts, each unit length and weighted by the
// square root of its share, side by side. Version 1 (one part of int8,
// the header V and D) is still read: it is what `make wordvectors` wrote
// before the distilled part.
//
//go:embed wordvectors.bin
var wordVectorsFile []byte

const (
	wordVectorsMagic   = "TSWV\x02"
	wordVectorsMagicV1 = "TSWV\x01"
)

// WordVectors are unit word vectors keyed by Porter stem, with each word's
// corpus frequency. They are held as the file stores them, a byte a
// component with a scale per word and part (6 MB for the built-in ones
// where float32 took 25 MB in every process), and expanded as they are
// added (addTo).
type WordVectors struct {
	Dims  int
	index map[string]int32
	codes []int8    // V·Dims: each part's stored components
	scale []float32 // V·(len(parts)-1): each word's part's codes × scale = its unit vector's components
	parts []int     // each part's first component, then Dims
	freq  []float32 // relative corpus frequency
}

// Lookup returns the vector and relative corpus frequency of a stem.
func (w *WordVectors) Lookup(stem string) ([]float32, float32, bool) {
	i, p, ok := w.find(stem)
	if !ok {
		return nil, 0, false
	}
	v := make([]float32, w.Dims)
	w.addTo(v, i, 1)
	return v, p, true
}

// Parts returns the number of parts each vector is made of (1 for a
// version 1 file; cmd/genvectors -teacher writes 1 or 2).
func (w *WordVectors) Parts() int { return len(w.parts) - 1 }

// find returns a stem's row and relative corpus frequency.
func (w *WordVectors) find(stem string) (int32, float32, bool) {
	i, ok := w.index[stem]
	if !ok {
		return 0, 0, false
	}
	return i, w.freq[i], true
}

// addTo adds weight × word i's vector to v (Dims long).
func (w *WordVectors) addTo(v []float32, i int32, weight float32) {
	np := len(w.parts) - 1
	row := w.codes[int(i)*w.Dims:][:w.Dims]
	for k := 0; k < np; k++ {
		lo, hi := w.parts[k], w.parts[k+1]
		s := weight * w.scale[int(i)*np+k]
		dst := v[lo:hi]
		for j, c := range row[lo:hi] {
			dst[j] += s * float32(c)
		}
	}
}

// Len returns the number of words.
func (w *WordVectors) Len() int { return len(w.freq) }

var builtinWordVectors = sync.OnceValues(func() (*WordVectors, error) {
	return ReadWordVectors(bytes.NewReader(wordVectorsFile))
})

// VectorPart is one part of every word's vector (WriteWordVectorParts):
// Vecs[i] of Dims components for word i, stored with Bits (8 or 4) per
// component, weighted so that it makes Share of two words' similarity.
type VectorPart struct {
	Vecs  [][]float32
	Dims  int
	Bits  int
	Share float64
}

// WriteWordVectors writes vectors in the format ReadWordVectors reads,
// one part of int8 components.
func WriteWordVectors(w io.Writer, words []string, counts []uint32, vecs [][]float32, dims int) error {
	return WriteWordVectorParts(w, words, counts, []VectorPart{{Vecs: vecs, Dims: dims, Bits: 8, Share: 1}})
}

// WriteWordVectorParts writes vectors made of parts in the format
// ReadWordVectors reads; each part of each vector is quantised on its own.
func WriteWordVectorParts(w io.Writer, words []string, counts []uint32, parts []VectorPart) error {
	if len(words) != len(counts) {
		return errors.New("word vectors: words and counts differ in length")
	}
	if len(parts) == 0 || len(parts) > 8 {
		return fmt.Errorf("word vectors: %d parts, want 1 to 8", len(parts))
	}
	for k, p := range parts {
		switch {
		case len(p.Vecs) != len(words):
			return fmt.Errorf("word vectors: part %d has %d vectors for %d words", k, len(p.Vecs), len(words))
		case p.Bits != 8 && p.Bits != 4:
			return fmt.Errorf("word vectors: part %d: %d bits a component, want 8 or 4", k, p.Bits)
		case p.Bits == 4 && p.Dims%2 != 0:
			return fmt.Errorf("word vectors: part %d: 4-bit components need an even dimension, not %d", k, p.Dims)
		case p.Dims <= 0 || p.Dims > 4096 || !(p.Share > 0 && p.Share <= 1):
			return fmt.Errorf("word vectors: part %d: dimension %d and share %g, want 1-4096 and a share in (0, 1]", k, p.Dims, p.Share)
		}
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(wordVectorsMagic)
	binary.Write(bw, binary.LittleEndian, uint32(len(words)))
	bw.WriteByte(byte(len(parts)))
	for _, p := range parts {
		binary.Write(bw, binary.LittleEndian, uint32(p.Dims))
		bw.WriteByte(byte(p.Bits))
		binary.Write(bw, binary.LittleEndian, float32(p.Share))
	}
	var tmp [binary.MaxVarintLen64]byte
	for i, word := range words {
		bw.Write(tmp[:binary.PutUvarint(tmp[:], uint64(len(word)))])
		bw.WriteString(word)
		binary.Write(bw, binary.LittleEndian, counts[i])
	}
	for k, p := range parts {
		top := 127.0
		if p.Bits == 4 {
			top = 7
		}
		q := make([]byte, p.Dims*p.Bits/8)
		for _, v := range p.Vecs {
			if len(v) != p.Dims {
				return fmt.Errorf("word vectors: part %d: a vector has %d components, want %d", k, len(v), p.Dims)
			}
			var m float64
			for _, x := range v {
				m = math.Max(m, math.Abs(float64(x)))
			}
			clear(q)
			for j, x := range v {
				c := 0.0
				if m > 0 {
					c = math.Round(float64(x) / m * top)
				}
				if p.Bits == 8 {
					q[j] = byte(int8(c))
				} else {
					q[j/2] |= byte(int(c)+8) << (4 * (j % 2))
				}
			}
			bw.Write(q)
		}
	}
	return bw.Flush()
}

// ReadWordVectors reads vectors written by WriteWordVectorParts (or by
// version 1 of the format).
func ReadWordVectors(r io.Reader) (*WordVectors, error) {
	br := bufio.NewReader(r)
	magic := make([]byte, len(wordVectorsMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != wordVectorsMagic && string(magic) != wordVectorsMagicV1 {
		return nil, errors.New("word vectors: not a toolscout word vector file (version 1 or 2)")
	}
	var n uint32
	if err := binary.Read(br, binary.LittleEndian, &n); err != nil {
		return nil, fmt.Errorf("word vectors: %w", err)
	}
	var parts []VectorPart
	if string(magic) == wordVectorsMagicV1 {
		var dims uint32
		if err := binary.Read(br, binary.LittleEndian, &dims); err != nil {
			return nil, fmt.Errorf("word vectors: %w", err)
		}
		parts = []VectorPart{{Dims: int(dims), Bits: 8, Share: 1}}
	} else {
		np, err := br.ReadByte()
		if err != nil || np == 0 || np > 8 {
			return nil, fmt.Errorf("word vectors: implausible number of parts (%d)", np)
		}
		for k := 0; k < int(np); k++ {
			var dims uint32
			var share float32
			if err := binary.Read(br, binary.LittleEndian, &dims); err != nil {
				return nil, fmt.Errorf("word vectors: part %d: %w", k, err)
			}
			bits, err := br.ReadByte()
			if err != nil {
				return nil, fmt.Errorf("word vectors: part %d: %w", k, err)
			}
			if err := binary.Read(br, binary.LittleEndian, &share); err != nil {
				return nil, fmt.Errorf("word vectors: part %d: %w", k, err)
			}
			if bits != 8 && bits != 4 || bits == 4 && dims%2 != 0 || !(share > 0 && share <= 1) {
				return nil, fmt.Errorf("word vectors: part %d: %d bits, dimension %d, share %g", k, bits, dims, share)
			}
			parts = append(parts, VectorPart{Dims: int(dims), Bits: int(bits), Share: float64(share)})
		}
	}
	total := 0
	for _, p := range parts {
		if p.Dims == 0 || p.Dims > 4096 {
			total = 1 << 30
		}
		total += p.Dims
	}
	if n == 0 || n > 1<<22 || total == 0 || total > 4096 {
		return nil, fmt.Errorf("word vectors: implausible size %d × %d", n, total)
	}
	wv := &WordVectors{Dims: total, index: make(map[string]int32, n), codes: make([]int8, int(n)*total),
		scale: make([]float32, int(n)*len(parts)), freq: make([]float32, n)}
	var sum float64
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
		sum += float64(counts[i])
	}
	// Each part of a word is made unit length and weighted by the square
	// root of its share, then the whole vector unit length: scale says
	// by how much each part's codes are multiplied (in float64, rounded
	// once).
	scale := make([]float64, int(n)*len(parts))
	norm2 := make([]float64, n) // of the weighted vector
	off := 0
	for k, p := range parts {
		wv.parts = append(wv.parts, off)
		q := make([]byte, p.Dims*p.Bits/8)
		for i := 0; i < int(n); i++ {
			if _, err := io.ReadFull(br, q); err != nil {
				return nil, fmt.Errorf("word vectors: part %d, vector %d: %w", k, i, err)
			}
			v := wv.codes[i*total+off : i*total+off+p.Dims]
			var s2 float64
			for j := range v {
				if p.Bits == 8 {
					v[j] = int8(q[j])
				} else {
					v[j] = int8(int(q[j/2]>>(4*(j%2))&15) - 8)
				}
				s2 += float64(v[j]) * float64(v[j])
			}
			if s2 > 0 {
				scale[i*len(parts)+k] = math.Sqrt(p.Share / s2)
				norm2[i] += p.Share
			}
		}
		off += p.Dims
	}
	wv.parts = append(wv.parts, total)
	for i := 0; i < int(n); i++ {
		for k := range parts {
			if norm2[i] > 0 {
				wv.scale[i*len(parts)+k] = float32(scale[i*len(parts)+k] / math.Sqrt(norm2[i]))
			}
		}
		wv.freq[i] = float32(float64(counts[i]) / sum)
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
	_, p, ok := wv.find(stem)
	return float64(p), ok
}
