package format

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/toolscout/toolscout/internal/checksum"
)

// FitHeader starts a saved fit file. Then: the sketch of the catalog the
// statistics were fitted on (uint32 count, then count pairs of uint64
// name hash and uint64 content hash, little endian, sorted by name hash),
// then the embedder's own data, then the checksums of all that
// (checksum.Write). Files of the earlier formats are migrated, or
// removed, by index/store's migration step (migrate.go).
const FitHeader = "TSFITV03"

// FitTool is one tool of a FitSketch: hashes of its qualified name and
// of its content hash.
type FitTool struct{ Name, Content uint64 }

// FitSketch is the catalog a fit was made on, sorted by name hash
// (qualified names are unique).
type FitSketch []FitTool

// Drift counts the tools added, removed or changed from s to o.
func (s FitSketch) Drift(o FitSketch) int {
	n, i, j := 0, 0, 0
	for i < len(s) && j < len(o) {
		switch {
		case s[i].Name < o[j].Name:
			n++
			i++
		case s[i].Name > o[j].Name:
			n++
			j++
		default:
			if s[i].Content != o[j].Content {
				n++
			}
			i++
			j++
		}
	}
	return n + len(s) - i + len(o) - j
}

// WriteFit writes a fit file: the sketch, then what save writes, then the
// checksums (checksum.Write).
func WriteFit(w io.Writer, sketch FitSketch, save func(io.Writer) error) error {
	return checksum.Write(w, func(bw *bufio.Writer) error {
		bw.WriteString(FitHeader)
		var buf [16]byte
		binary.LittleEndian.PutUint32(buf[:4], uint32(len(sketch)))
		bw.Write(buf[:4])
		for _, t := range sketch {
			binary.LittleEndian.PutUint64(buf[:8], t.Name)
			binary.LittleEndian.PutUint64(buf[8:], t.Content)
			bw.Write(buf[:])
		}
		return save(bw)
	})
}

// ReadFit reads a fit file's sketch and returns it with the rest of data,
// the embedder's. A file whose checksum does not match is checksum.ErrMismatch;
// any other, an error saying it is not a saved fit.
func ReadFit(data []byte) (FitSketch, []byte, error) {
	if len(data) < len(FitHeader)+4+checksum.MinFooter || string(data[:len(FitHeader)]) != FitHeader {
		return nil, nil, errors.New("not a saved fit")
	}
	data, err := checksum.Body(data)
	if err != nil {
		return nil, nil, err
	}
	// The checksums can hold a body too short for its count (a file
	// written wrong, or cut and sealed again): checked after them.
	if len(data) < len(FitHeader)+4 {
		return nil, nil, fmt.Errorf("cut short: %d bytes, no sketch", len(data))
	}
	data = data[len(FitHeader):]
	n := int64(binary.LittleEndian.Uint32(data))
	data = data[4:]
	if int64(len(data)) < 16*n {
		return nil, nil, fmt.Errorf("cut short: %d bytes for a sketch of %d tools", len(data), n)
	}
	s := make(FitSketch, n)
	for i := range s {
		s[i] = FitTool{binary.LittleEndian.Uint64(data[16*i:]), binary.LittleEndian.Uint64(data[16*i+8:])}
	}
	return s, data[16*n:], nil
}
