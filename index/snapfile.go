package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"unsafe"
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
	return WriteFileAtomic(snapPathOf(gobPath), func(w *bufio.Writer) error {
		var hdr [8 + 8 + 8 + 4 + 4]byte
		copy(hdr[:8], snapMagic)
		binary.LittleEndian.PutUint64(hdr[8:], uint64(gi.Size()))
		binary.LittleEndian.PutUint64(hdr[16:], uint64(gi.ModTime().UnixNano()))
		binary.LittleEndian.PutUint32(hdr[24:], uint32(s.dims))
		binary.LittleEndian.PutUint32(hdr[28:], uint32(len(s.ids)))
		w.Write(hdr[:])
		var lb [binary.MaxVarintLen64]byte
		n := 32
		for i := range s.ids {
			for _, str := range [4]string{s.ids[i], s.hash[i], s.domain[i], s.group[i]} {
				k := binary.PutUvarint(lb[:], uint64(len(str)))
				w.Write(lb[:k])
				w.WriteString(str)
				n += k + len(str)
			}
		}
		// Zero padding puts the matrix at a multiple of 4 bytes, so a reader
		// on a little-endian machine uses the file's bytes as floats in place.
		w.Write(make([]byte, (4-n%4)%4))
		var fb [4]byte
		for _, x := range s.mat {
			binary.LittleEndian.PutUint32(fb[:], math.Float32bits(x))
			w.Write(fb[:])
		}
		return nil
	})
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
	data, err := readOnlyFile(snapPathOf(gobPath))
	if err != nil {
		return nil, err
	}
	if len(data) < 32 || string(data[:8]) != snapMagic {
		return nil, errors.New("not a toolscout snapshot")
	}
	if int64(binary.LittleEndian.Uint64(data[8:])) != gi.Size() || int64(binary.LittleEndian.Uint64(data[16:])) != gi.ModTime().UnixNano() {
		return nil, errStaleSnap
	}
	dims, rows := int(binary.LittleEndian.Uint32(data[24:])), int(binary.LittleEndian.Uint32(data[28:]))
	// The matrix alone needs rows × dims × 4 bytes: a header that claims
	// more than the file holds is damage, not a reason to allocate.
	matBytes := int64(rows) * int64(dims) * 4
	if dims <= 0 || matBytes > int64(len(data)) {
		return nil, fmt.Errorf("snapshot header claims %d rows of %d dimensions in %d bytes", rows, dims, len(data))
	}
	// The strings region is one string that every field slices (no
	// allocation per tool).
	strEnd := int64(len(data)) - matBytes
	if strEnd < 32 {
		return nil, errors.New("snapshot is shorter than its matrix")
	}
	region := data[32:strEnd]
	type span struct{ off, n int }
	spans := make([]span, 4*rows)
	pos := 0
	for i := range spans {
		n, k := binary.Uvarint(region[pos:])
		if k <= 0 || uint64(len(region)-pos-k) < n {
			return nil, fmt.Errorf("snapshot row %d: bad string", i/4)
		}
		pos += k
		spans[i] = span{pos, int(n)}
		pos += int(n)
	}
	if pad := len(region) - pos; pad < 0 || pad > 3 {
		return nil, errors.New("snapshot strings do not end where the matrix starts")
	}
	var all string // the file's bytes, read-only (readOnlyFile)
	if len(region) > 0 {
		all = unsafe.String(&region[0], len(region))
	}
	s := &snapshot{dims: dims, ids: make([]string, rows), hash: make([]string, rows), domain: make([]string, rows), group: make([]string, rows)}
	for i := 0; i < rows; i++ {
		for j, dst := range [4]*string{&s.ids[i], &s.hash[i], &s.domain[i], &s.group[i]} {
			sp := spans[4*i+j]
			*dst = all[sp.off : sp.off+sp.n]
		}
	}
	s.mat = floats(data[strEnd:], rows*dims)
	return s, nil
}

// littleEndian is true on machines that store a float32 as the file does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// floats returns the n little-endian float32 values in b: b itself, read
// in place, when the machine is little endian and b is aligned (the file
// keeps it alive), else a decoded copy.
func floats(b []byte, n int) []float32 {
	if n == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
