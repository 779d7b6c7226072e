package snapfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/toolscout/toolscout/internal/checksum"
)

// WriteRows writes the snapshot file that Write writes for s with the
// float16 matrix m holds (rows × dims values, little endian, row after
// row, from offset 0) as its Half, byte for byte; s's strings (IDs,
// Hash, Domain, Group) are written, its Mat, Half and Signs are not
// read. Neither the matrix nor its sign bits are held in memory: m is
// read three times (the centres, the matrix, the bits) a MiB at a time.
// A cold sync at 1M tools embeds into a file for this (2.56 GB of
// float32 rows that were resident until the snapshot was written).
func WriteRows(path string, s *Snap, m io.ReaderAt, id uint64) error {
	rows, dims := len(s.IDs), s.Dims
	if dims <= 0 {
		return fmt.Errorf("write snapshot %s: %d dimensions", path, dims)
	}
	rowBytes := 2 * dims
	chunk := max(1, (1<<20)/rowBytes) // rows a read
	buf := make([]byte, chunk*rowBytes)
	each := func(f func(row []byte) error) error {
		for lo := 0; lo < rows; lo += chunk {
			b := buf[:min(chunk, rows-lo)*rowBytes]
			if k, err := m.ReadAt(b, int64(lo)*int64(rowBytes)); err != nil && !(errors.Is(err, io.EOF) && k == len(b)) {
				return fmt.Errorf("read the matrix's rows %d to %d: %w", lo, lo+len(b)/rowBytes, err)
			}
			for r := 0; r < len(b); r += rowBytes {
				if err := f(b[r : r+rowBytes]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// The centres first (Quantize's, summed in the same order): the
	// bits after the matrix compare each row with them.
	// The domain sums in the same pass, in row order (sums.go).
	var centre []float32
	var doms *domainSummer
	if rows > 0 {
		sum := make([]float64, dims)
		doms = newDomainSummer(s.Domain, rows, dims)
		i := 0
		err := each(func(row []byte) error {
			for j := range sum {
				sum[j] += float64(HalfFloat(binary.LittleEndian.Uint16(row[2*j:])))
			}
			doms.add(s.Domain, i, func(j int) float32 { return HalfFloat(binary.LittleEndian.Uint16(row[2*j:])) })
			i++
			return nil
		})
		if err != nil {
			return fmt.Errorf("write snapshot %s: %w", path, err)
		}
		centre = make([]float32, dims)
		for j := range sum {
			centre[j] = float32(sum[j] / float64(rows))
		}
	}
	var sums []float32
	if doms != nil {
		sums = doms.sums
	}
	err := checksum.WriteFile(path, func(w *bufio.Writer) error {
		writeHead(w, s, nil, id, 0, len(sums)/dims)
		if err := each(func(row []byte) error { _, err := w.Write(row); return err }); err != nil {
			return err
		}
		var fb [8]byte
		for _, x := range centre {
			binary.LittleEndian.PutUint32(fb[:], math.Float32bits(x))
			w.Write(fb[:4])
		}
		pad, _, _ := quantLayout(rows, dims, 2)
		w.Write(make([]byte, pad))
		bits := make([]uint64, (dims+63)/64)
		err := each(func(row []byte) error {
			clear(bits)
			for j, c := range centre {
				if HalfFloat(binary.LittleEndian.Uint16(row[2*j:])) > c {
					bits[j/64] |= 1 << (j % 64)
				}
			}
			for _, x := range bits {
				binary.LittleEndian.PutUint64(fb[:], x)
				if _, err := w.Write(fb[:]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		writeFloats(w, sums)
		return nil
	})
	if err != nil {
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	return nil
}
