package vector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fileio"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"unsafe"
)

// A snapshot file (.snap beside a collection's .gob) holds what a start
// needs from a collection, contiguous: per tool its ID, content hash,
// domain and group, then the L2-normalised vectors as one float32 matrix.
// Opening an index reads it in one pass instead of decoding chromem-go's
// export document by document.
//
// Layout (little endian):
//
//	"TSSNAP04"                       magic
//	uint64 size, int64 mtime (ns)    of the .gob it was written with
//	uint32 dims, uint32 rows
//	uint32 removed, uint32 0
//	uint64 size, int64 mtime (ns)    of the base .gob (a delta's; else 0)
//	rows × 4 strings                 uvarint length + bytes: id, hash, domain, group
//	removed strings                  the base IDs a delta removes
//	0-63 zero bytes                  the matrix starts at a multiple of 64
//	rows × dims float32              the matrix
//	checksums                        a CRC-32C per MiB of all the above (checksum.Write)
//
// The checksum is checked before anything else is read: a file whose
// bytes changed is damaged, and rebuilt from its .gob with a warning.
// The .gob's size and modification time tie the two files: a snapshot
// whose .gob changed since (or is gone) is stale, and rebuilt from it
// without a warning (a kill between the two writes leaves one). A
// delta's snapshot (.delta.snap beside .delta.gob, see deltaFileOf) also
// names the base .gob it applies to. Files of the earlier formats
// ("TSSNAP01" to "TSSNAP03", without a checksum) are rebuilt once, with
// a warning (errOldSnap).
const snapMagic = "TSSNAP04"

// snapOlder are the magics of the earlier snapshot formats.
var snapOlder = []string{"TSSNAP01", "TSSNAP02", "TSSNAP03"}

// snapAlign is where a snapshot's matrix starts in its file, and so in
// memory when the file is mapped or read whole (both page-aligned): a
// cache line.
const snapAlign = 64

const snapExt = ".snap"

func snapPathOf(gobPath string) string {
	return gobPath[:len(gobPath)-len(filepath.Ext(gobPath))] + snapExt
}

// fileTag identifies one version of a file: its size and modification
// time.
type fileTag struct {
	size  int64
	mtime int64 // ns
}

func tagOf(path string) (fileTag, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileTag{}, err
	}
	return fileTag{fi.Size(), fi.ModTime().UnixNano()}, nil
}

// writeSnap writes s beside gobPath (temporary file, fsync, rename), with
// its checksum. For a delta, removed and base say which base IDs it
// drops and which base .gob it applies to.
func writeSnap(gobPath string, s *snapshot, removed []string, base fileTag) error {
	gt, err := tagOf(gobPath)
	if err != nil {
		return err
	}
	return checksum.WriteFile(snapPathOf(gobPath), func(w *bufio.Writer) error {
		var hdr [snapHeader]byte
		copy(hdr[:8], snapMagic)
		binary.LittleEndian.PutUint64(hdr[8:], uint64(gt.size))
		binary.LittleEndian.PutUint64(hdr[16:], uint64(gt.mtime))
		binary.LittleEndian.PutUint32(hdr[24:], uint32(s.dims))
		binary.LittleEndian.PutUint32(hdr[28:], uint32(len(s.ids)))
		binary.LittleEndian.PutUint32(hdr[32:], uint32(len(removed)))
		binary.LittleEndian.PutUint64(hdr[40:], uint64(base.size))
		binary.LittleEndian.PutUint64(hdr[48:], uint64(base.mtime))
		w.Write(hdr[:])
		var lb [binary.MaxVarintLen64]byte
		n := snapHeader
		str := func(str string) {
			k := binary.PutUvarint(lb[:], uint64(len(str)))
			w.Write(lb[:k])
			w.WriteString(str)
			n += k + len(str)
		}
		for i := range s.ids {
			for _, f := range [4]string{s.ids[i], s.hash[i], s.domain.at(i), s.group.at(i)} {
				str(f)
			}
		}
		for _, id := range removed {
			str(id)
		}
		// Zero padding puts the matrix at a multiple of 64 bytes, so a
		// reader on a little-endian machine uses the file's bytes as floats
		// in place, each row at the same place in a cache line.
		w.Write(make([]byte, (snapAlign-n%snapAlign)%snapAlign))
		var fb [4]byte
		for _, x := range s.mat {
			binary.LittleEndian.PutUint32(fb[:], math.Float32bits(x))
			w.Write(fb[:])
		}
		return nil
	})
}

const snapHeader = 56

var (
	// errStaleSnap means a snapshot file does not match its collection
	// file: rebuilt from it, nothing lost.
	errStaleSnap = errors.New("snapshot older than its collection")
	// errOldSnap means a snapshot file of an earlier format, without a
	// checksum: rebuilt from its collection file once.
	errOldSnap = errors.New("snapshot of an earlier format, without a checksum")
)

// readSnap reads the snapshot beside gobPath. It fails with
// os.ErrNotExist when either file is missing, errOldSnap for a file of an
// earlier format, checksum.ErrMismatch when its bytes changed since they were
// written (damage), and errStaleSnap when the .gob changed since it was
// written. removed and base are a delta's (see writeSnap).
func readSnap(gobPath string) (s *snapshot, removed []string, base fileTag, err error) {
	gt, err := tagOf(gobPath)
	if err != nil {
		return nil, nil, base, err
	}
	data, err := fileio.ReadMapped(snapPathOf(gobPath))
	if err != nil {
		return nil, nil, base, err
	}
	return decodeSnap(data, gt)
}

// decodeSnap decodes a snapshot file's bytes, written with the .gob of
// tag gt (readSnap; its errors). The strings and, on a little-endian
// machine, the matrix point into data, which must never change after.
func decodeSnap(data []byte, gt fileTag) (s *snapshot, removed []string, base fileTag, err error) {
	if len(data) >= len(snapMagic) && slices.Contains(snapOlder, string(data[:len(snapMagic)])) {
		return nil, nil, base, errOldSnap
	}
	if len(data) < snapHeader+checksum.MinFooter || string(data[:len(snapMagic)]) != snapMagic {
		return nil, nil, base, errors.New("not a toolscout snapshot")
	}
	if data, err = checksum.Body(data); err != nil {
		return nil, nil, base, err
	}
	// The checksums can hold a body shorter than the header (a file
	// written wrong, or cut and sealed again): checked after them.
	if len(data) < snapHeader {
		return nil, nil, base, errors.New("snapshot shorter than its header")
	}
	if int64(binary.LittleEndian.Uint64(data[8:])) != gt.size || int64(binary.LittleEndian.Uint64(data[16:])) != gt.mtime {
		return nil, nil, base, errStaleSnap
	}
	dims, rows := int(binary.LittleEndian.Uint32(data[24:])), int(binary.LittleEndian.Uint32(data[28:]))
	nremoved := int(binary.LittleEndian.Uint32(data[32:]))
	base = fileTag{int64(binary.LittleEndian.Uint64(data[40:])), int64(binary.LittleEndian.Uint64(data[48:]))}
	// The matrix alone needs rows × dims × 4 bytes, and each string at
	// least a byte: a header that claims more than the file holds is
	// damage, not a reason to allocate. (The checksum makes that
	// unlikely, not impossible: a file written wrong checks.) The product
	// is taken in 128 bits: two counts near 2^32 overflowed int64 to a
	// small or negative size, and the strings region was then sliced
	// past the file.
	hi, lo := bits.Mul64(uint64(rows), 4*uint64(dims))
	matBytes := int64(lo)
	if dims <= 0 || hi != 0 || lo > uint64(len(data)) || matBytes+int64(4*rows+nremoved) > int64(len(data)) {
		return nil, nil, base, fmt.Errorf("snapshot header claims %d rows of %d dimensions in %d bytes", rows, dims, len(data))
	}
	// The strings region is one string that every field slices (no
	// allocation per tool).
	strEnd := int64(len(data)) - matBytes
	if strEnd < snapHeader {
		return nil, nil, base, errors.New("snapshot is shorter than its matrix")
	}
	region := data[snapHeader:strEnd]
	type span struct{ off, n int }
	spans := make([]span, 4*rows+nremoved)
	pos := 0
	for i := range spans {
		n, k := binary.Uvarint(region[pos:])
		if k <= 0 || uint64(len(region)-pos-k) < n {
			return nil, nil, base, fmt.Errorf("snapshot row %d: bad string", i/4)
		}
		pos += k
		spans[i] = span{pos, int(n)}
		pos += int(n)
	}
	if pad := len(region) - pos; pad < 0 || pad >= snapAlign {
		return nil, nil, base, errors.New("snapshot strings do not end where the matrix starts")
	}
	var all string // the file's bytes, read-only (fileio.ReadMapped)
	if len(region) > 0 {
		all = unsafe.String(&region[0], len(region))
	}
	str := func(i int) string { return all[spans[i].off : spans[i].off+spans[i].n] }
	s = &snapshot{dims: dims, ids: make([]string, rows), hash: make([]string, rows),
		domain: labels{idx: make([]uint32, 0, rows)}, group: labels{idx: make([]uint32, 0, rows)}}
	for i := 0; i < rows; i++ {
		s.ids[i], s.hash[i] = str(4*i), str(4*i+1)
		s.domain.add(str(4*i + 2))
		s.group.add(str(4*i + 3))
	}
	if nremoved > 0 {
		removed = make([]string, nremoved)
		for i := range removed {
			removed[i] = str(4*rows + i)
		}
	}
	s.mat = floats(data[strEnd:], rows*dims)
	return s, removed, base, nil
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
