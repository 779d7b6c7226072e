package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// A snapshot file (.snap beside a collection's .gob) holds what a start
// needs from a collection, contiguous: per tool its ID, content hash,
// domain and group, then the L2-normalised vectors as one float32 matrix.
// Opening an unchanged index reads it in one pass instead of decoding
// chromem-go's export document by document, and the chromem-go collection
// is only loaded when a sync has something to change.
//
// Layout (little endian):
//
//	"TSSNAP01"                       magic
//	uint64 size, int64 mtime (ns)    of the .gob it was written with
//	uint32 dims, uint32 rows
//	rows × 4 strings                 uvarint length + bytes: id, hash, domain, group
//	rows × dims float32              the matrix
//
// The .gob's size and modification time tie the two files: a snapshot
// whose .gob changed since (or is gone) is ignored and rebuilt.
const snapMagic = "TSSNAP01"

const snapExt = ".snap"

func snapPathOf(gobPath string) string {
	return gobPath[:len(gobPath)-len(filepath.Ext(gobPath))] + snapExt
}

// writeSnap writes s beside gobPath (temporary file, fsync, rename).
func writeSnap(gobPath string, s *snapshot) error {
	gi, err := os.Stat(gobPath)
	if err != nil {
		return err
	}
	path := snapPathOf(gobPath)
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+tmpSuffix+"*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	var hdr [8 + 8 + 8 + 4 + 4]byte
	copy(hdr[:8], snapMagic)
	binary.LittleEndian.PutUint64(hdr[8:], uint64(gi.Size()))
	binary.LittleEndian.PutUint64(hdr[16:], uint64(gi.ModTime().UnixNano()))
	binary.LittleEndian.PutUint32(hdr[24:], uint32(s.dims))
	binary.LittleEndian.PutUint32(hdr[28:], uint32(len(s.ids)))
	w.Write(hdr[:])
	var lb [binary.MaxVarintLen64]byte
	for i := range s.ids {
		for _, str := range [4]string{s.ids[i], s.hash[i], s.domain[i], s.group[i]} {
			w.Write(lb[:binary.PutUvarint(lb[:], uint64(len(str)))])
			w.WriteString(str)
		}
	}
	var fb [4]byte
	for _, x := range s.mat {
		binary.LittleEndian.PutUint32(fb[:], math.Float32bits(x))
		w.Write(fb[:])
	}
	err = w.Flush()
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}

// errStaleSnap means a snapshot file does not match its collection file.
var errStaleSnap = errors.New("snapshot older than its collection")

// readSnap reads the snapshot beside gobPath. It fails with errStaleSnap
// when the .gob changed since it was written.
func readSnap(gobPath string) (*snapshot, error) {
	gi, err := os.Stat(gobPath)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(snapPathOf(gobPath))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr [32]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("snapshot header: %w", err)
	}
	if string(hdr[:8]) != snapMagic {
		return nil, errors.New("not a toolscout snapshot")
	}
	if int64(binary.LittleEndian.Uint64(hdr[8:])) != gi.Size() || int64(binary.LittleEndian.Uint64(hdr[16:])) != gi.ModTime().UnixNano() {
		return nil, errStaleSnap
	}
	dims, rows := int(binary.LittleEndian.Uint32(hdr[24:])), int(binary.LittleEndian.Uint32(hdr[28:]))
	// The matrix alone needs rows × dims × 4 bytes: a header that claims
	// more than the file holds is damage, not a reason to allocate.
	if dims <= 0 || int64(rows)*int64(dims)*4 > fi.Size() {
		return nil, fmt.Errorf("snapshot header claims %d rows of %d dimensions in %d bytes", rows, dims, fi.Size())
	}
	s := &snapshot{dims: dims, ids: make([]string, rows), hash: make([]string, rows), domain: make([]string, rows), group: make([]string, rows)}
	for i := 0; i < rows; i++ {
		for _, dst := range [4]*string{&s.ids[i], &s.hash[i], &s.domain[i], &s.group[i]} {
			n, err := binary.ReadUvarint(r)
			if err != nil || n > 1<<16 {
				return nil, fmt.Errorf("snapshot row %d: bad string length", i)
			}
			b := make([]byte, n)
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, fmt.Errorf("snapshot row %d: %w", i, err)
			}
			*dst = string(b)
		}
	}
	raw := make([]byte, rows*dims*4)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("snapshot matrix: %w", err)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, errors.New("snapshot has trailing bytes")
	}
	s.mat = make([]float32, rows*dims)
	for i := range s.mat {
		s.mat[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return s, nil
}
