// Package fitfile owns the built-in embedder's saved fit: the IDF
// weights embed.Builtin's SaveFit writes and LoadFit reads (index/store
// keeps them in a fit file, behind its own header and checksums). It is
// a package of its own, with the standard library alone, so that `make
// fuzz` builds its fuzz target without instrumenting what package embed
// imports (Ollama's client, net/http).
//
//	hash, weight, err := fitfile.Read(r)
//	err = fitfile.Write(w, hash, weight)
//	recs, err := fitfile.Check(data) // in place: recs.Find(hash)
package fitfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Magic starts a saved fit: then a uint32 count and count pairs of
// (uint64 feature hash, float32 IDF), little endian, sorted by hash.
const Magic = "TSFIT001"

// maxLen bounds what Read reads of r.
const maxLen = 1 << 30

// Write writes the weights of features hash (ascending; weight the same
// length) as a saved fit.
func Write(w io.Writer, hash []uint64, weight []float32) error {
	if len(hash) != len(weight) {
		return fmt.Errorf("saved fit: %d features and %d weights", len(hash), len(weight))
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(Magic)
	var buf [12]byte
	binary.LittleEndian.PutUint32(buf[:4], uint32(len(hash)))
	bw.Write(buf[:4])
	for i := range hash {
		binary.LittleEndian.PutUint64(buf[:8], hash[i])
		binary.LittleEndian.PutUint32(buf[8:], math.Float32bits(weight[i]))
		bw.Write(buf[:])
	}
	return bw.Flush()
}

// Read reads what Write wrote: the features' hashes, ascending, and
// their weights. An error names what is wrong; the count in the head is
// checked against the bytes before anything is allocated from it.
func Read(r io.Reader) (hash []uint64, weight []float32, err error) {
	data, err := io.ReadAll(io.LimitReader(r, maxLen))
	if err != nil {
		return nil, nil, err
	}
	recs, err := Check(data)
	if err != nil {
		return nil, nil, err
	}
	n := recs.Len()
	hash, weight = make([]uint64, n), make([]float32, n)
	for i := 0; i < n; i++ {
		hash[i], weight[i] = recs.Hash(i), recs.Weight(i)
	}
	return hash, weight, nil
}

// Records are a saved fit's features where they lie in its bytes: 12
// bytes each, the hash then the weight, little endian, ascending by
// hash. They are read in place, without a copy.
type Records []byte

// Check checks a saved fit held whole in data, as Read does (magic,
// count, the hashes ascending), and returns its features in place.
func Check(data []byte) (Records, error) {
	if len(data) < len(Magic)+4 || string(data[:len(Magic)]) != Magic {
		return nil, errors.New("not a saved fit")
	}
	data = data[len(Magic):]
	n := int(binary.LittleEndian.Uint32(data))
	data = data[4:]
	if len(data) != 12*n {
		return nil, fmt.Errorf("saved fit: %d bytes for %d weights", len(data), n)
	}
	recs := Records(data)
	for i := 1; i < n; i++ {
		if recs.Hash(i) <= recs.Hash(i-1) {
			return nil, fmt.Errorf("saved fit: feature %d is out of order", i)
		}
	}
	return recs, nil
}

// Len returns the number of features.
func (r Records) Len() int { return len(r) / 12 }

// Hash returns feature i's hash.
func (r Records) Hash(i int) uint64 { return binary.LittleEndian.Uint64(r[12*i:]) }

// Weight returns feature i's weight.
func (r Records) Weight(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(r[12*i+8:]))
}

// Find returns the weight of the feature with hash h, found by halving,
// and whether there is one.
func (r Records) Find(h uint64) (float32, bool) {
	lo, hi := 0, r.Len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.Hash(m) < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == r.Len() || r.Hash(lo) != h {
		return 0, false
	}
	return r.Weight(lo), true
}
