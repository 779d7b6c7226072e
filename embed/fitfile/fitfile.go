// Package fitfile owns the built-in embedder's saved fit: the IDF
// weights embed.Builtin's SaveFit writes and LoadFit reads (index/store
// keeps them in a fit file, behind its own header and checksums). It is
// a package of its own, with the standard library alone, so that `make
// fuzz` builds its fuzz target without instrumenting what package embed
// imports (Ollama's client, net/http).
//
//	hash, weight, err := fitfile.Read(r)
//	err = fitfile.Write(w, hash, weight)
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
	if len(data) < len(Magic)+4 || string(data[:len(Magic)]) != Magic {
		return nil, nil, errors.New("not a saved fit")
	}
	data = data[len(Magic):]
	n := int(binary.LittleEndian.Uint32(data))
	data = data[4:]
	if len(data) != 12*n {
		return nil, nil, fmt.Errorf("saved fit: %d bytes for %d weights", len(data), n)
	}
	hash, weight = make([]uint64, n), make([]float32, n)
	for i := 0; i < n; i++ {
		hash[i] = binary.LittleEndian.Uint64(data[12*i:])
		weight[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[12*i+8:]))
		if i > 0 && hash[i] <= hash[i-1] {
			return nil, nil, fmt.Errorf("saved fit: feature %d is out of order", i)
		}
	}
	return hash, weight, nil
}
