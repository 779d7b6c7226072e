package snapfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"unsafe"

	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fileio"
)

// A snapshot file is the store of record of one collection: per tool its
// ID, content hash, domain and group, then the L2-normalised vectors as
// one float16 matrix (half.go), and a checksum. A start maps it and
// queries scan the matrix in place: the vectors are on disk once, in the
// form they are served in, and read-only replicas share its pages.
//
// Layout (little endian):
//
//	"TSSNAP08"                       magic
//	uint64 id                        this file's: fresh for every write, never 0
//	uint64 base                      a delta's: the id of the base it applies to; else 0
//	uint32 dims, uint32 rows
//	uint32 removed, uint32 domains   domains: how many domain sums end the file
//	rows × 4 strings                 uvarint length + bytes: id, hash, domain, group
//	removed strings                  the base IDs a delta removes
//	0-63 zero bytes                  the matrix starts at a multiple of 64
//	rows × dims float16              the matrix (half.go)
//	dims float32                     the quantized rows' centres (quant.go)
//	0-7 zero bytes                   the bits start at a multiple of 8
//	rows × ceil(dims/64) uint64      the quantized rows: a sign bit a dimension
//	                                 (with no rows, no centres either)
//	domains × dims float32           each domain's vector sum (sums.go), in the
//	                                 order the rows first name the domains
//	                                 (none in a delta: domains 0)
//	checksums                        a CRC-32C per MiB of all the above (checksum.Write)
//
// The checksum is checked before anything else is read: a file whose
// bytes changed is damaged, removed, and its tools embedded again, with a
// warning (read-only, it is refused). A delta (X.delta.snap beside X.snap,
// index/vector's deltaFileOf) names its base by the base's id, so a delta left
// beside a newer base (a kill between a full write and the delta's
// removal) is known and dropped. Files of the earlier formats ("TSSNAP01"
// to "TSSNAP04", each derived from a chromem-go export beside it) are
// never read: index/vector's Open migrates the export and writes over
// them.
// Files of "TSSNAP07", the same without the domain sums (a zero header
// word; the sums are computed from the rows as the centroids are needed),
// of "TSSNAP06", also with a float32 matrix (and 0 or 4 bytes of padding
// before the bits), and of "TSSNAP05", without the quantized rows either,
// are read (the matrix in place, a TSSNAP05's rows quantized in memory),
// said once in the log; the write path (Sync, the open of a collection
// with a delta) writes them again in this format, said in Healed.
const Magic = "TSSNAP08"

// V7 is the magic of the format before the domain sums.
const V7 = "TSSNAP07"

// V6 is the magic of the format with a float32 matrix.
const V6 = "TSSNAP06"

// V5 is the magic of the format before the quantized rows.
const V5 = "TSSNAP05"

// Older are the magics of the earlier snapshot formats, said as such
// in errors.
var Older = []string{"TSSNAP01", "TSSNAP02", "TSSNAP03", "TSSNAP04"}

// Align is where a snapshot's matrix starts in its file, and so in
// memory when the file is mapped or read whole (both page-aligned): a
// cache line.
const Align = 64

// NewFileID returns a fresh id for a snapshot file: random, not 0.
func NewFileID() uint64 {
	for {
		if id := rand.Uint64(); id != 0 {
			return id
		}
	}
}

// Write writes s to path (temporary file, fsync, rename), with its
// checksum and the id id. For a delta, removed and base say which base
// IDs it drops and which base (by id) it applies to.
func Write(path string, s *Snap, removed []string, id, base uint64) error {
	var sums []float32
	if base == 0 {
		// Not a delta's: a reader adds a delta's rows to the sums one at
		// a time, as the centroids always added them up.
		sums = s.domainSums()
	}
	return checksum.WriteFile(path, func(w *bufio.Writer) error {
		writeHead(w, s, removed, id, base, len(sums)/max(s.Dims, 1))
		var fb [8]byte
		if s.Mat == nil {
			for _, h := range s.Half {
				binary.LittleEndian.PutUint16(fb[:], h)
				w.Write(fb[:2])
			}
		} else {
			for _, x := range s.Mat {
				binary.LittleEndian.PutUint16(fb[:], Half(x))
				w.Write(fb[:2])
			}
		}
		sg := s.Signs
		if sg == nil {
			sg = s.Quantized()
		}
		for _, x := range sg.Centre {
			binary.LittleEndian.PutUint32(fb[:], math.Float32bits(x))
			w.Write(fb[:4])
		}
		pad, _, _ := quantLayout(len(s.IDs), s.Dims, 2)
		w.Write(make([]byte, pad))
		for _, x := range sg.Bits {
			binary.LittleEndian.PutUint64(fb[:], x)
			w.Write(fb[:])
		}
		writeFloats(w, sums)
		return nil
	})
}

// domainSums returns the domain sums Write writes for s: of its matrix's
// float16 values, as a reader finds them (sums.go).
func (s *Snap) domainSums() []float32 {
	rows, dims := len(s.IDs), s.Dims
	if rows == 0 || dims <= 0 {
		return nil
	}
	if s.Mat == nil {
		return DomainSums(s.Half, s.Domain, rows, dims)
	}
	d := newDomainSummer(s.Domain, rows, dims)
	for i := 0; i < rows; i++ {
		row := s.Mat[i*dims : (i+1)*dims]
		d.add(s.Domain, i, func(j int) float32 { return halfTable[Half(row[j])] })
	}
	return d.sums
}

// writeFloats writes fs, little endian.
func writeFloats(w *bufio.Writer, fs []float32) {
	var fb [4]byte
	for _, x := range fs {
		binary.LittleEndian.PutUint32(fb[:], math.Float32bits(x))
		w.Write(fb[:])
	}
}

// writeHead writes a snapshot file's header, its rows' strings, a
// delta's removed IDs and the padding before the matrix: what Write and
// WriteRows share.
func writeHead(w *bufio.Writer, s *Snap, removed []string, id, base uint64, domains int) {
	var hdr [HeaderLen]byte
	copy(hdr[:8], Magic)
	binary.LittleEndian.PutUint64(hdr[8:], id)
	binary.LittleEndian.PutUint64(hdr[16:], base)
	binary.LittleEndian.PutUint32(hdr[24:], uint32(s.Dims))
	binary.LittleEndian.PutUint32(hdr[28:], uint32(len(s.IDs)))
	binary.LittleEndian.PutUint32(hdr[32:], uint32(len(removed)))
	binary.LittleEndian.PutUint32(hdr[36:], uint32(domains))
	w.Write(hdr[:])
	var lb [binary.MaxVarintLen64]byte
	n := HeaderLen
	str := func(str string) {
		k := binary.PutUvarint(lb[:], uint64(len(str)))
		w.Write(lb[:k])
		w.WriteString(str)
		n += k + len(str)
	}
	for i := range s.IDs {
		for _, f := range [4]string{s.IDs[i], s.Hash[i], s.Domain.At(i), s.Group.At(i)} {
			str(f)
		}
	}
	for _, id := range removed {
		str(id)
	}
	// Zero padding puts the matrix at a multiple of 64 bytes, so a
	// reader on a little-endian machine uses the file's bytes as floats
	// in place, each row at the same place in a cache line.
	w.Write(make([]byte, (Align-n%Align)%Align))
}

// HeaderLen is the length of a snapshot file's header: magic, id,
// base, dims, rows, removed and the number of domain sums (a zero word
// before TSSNAP08).
const HeaderLen = 40

// ErrOld means a snapshot file of an earlier format: derived from a
// chromem-go export, which Open migrates.
var ErrOld = errors.New("snapshot of an earlier toolscout's format")

// Read reads the snapshot file at path: its rows, and a delta's
// removed IDs; id and base are the file's and its base's (Write). It
// fails with os.ErrNotExist when the file is missing, ErrOld for a
// file of an earlier format, and checksum.ErrMismatch when its bytes
// changed since they were written (damage).
func Read(path string) (s *Snap, removed []string, base uint64, err error) {
	data, err := fileio.ReadMapped(path)
	if err != nil {
		return nil, nil, 0, err
	}
	return Decode(data)
}

// Decode decodes a snapshot file's bytes (Read; its errors); the
// file's id is s.ID. The strings and, on a little-endian machine, the
// matrix point into data, which must never change after.
func Decode(data []byte) (s *Snap, removed []string, base uint64, err error) {
	if len(data) >= len(Magic) && slices.Contains(Older, string(data[:len(Magic)])) {
		return nil, nil, 0, ErrOld
	}
	if len(data) < HeaderLen+checksum.MinFooter || !isSnap(data) {
		return nil, nil, 0, errors.New("not a toolscout snapshot")
	}
	if data, err = checksum.Body(data); err != nil {
		return nil, nil, 0, err
	}
	return decodeBody(data)
}

// isSnap reports whether data starts with the magic of a format read.
func isSnap(data []byte) bool {
	m := string(data[:len(Magic)])
	return m == Magic || m == V7 || m == V6 || m == V5
}

// elemSize is the bytes of one value of the matrix in a file of the
// format of magic m (isSnap).
func elemSize(m string) uint64 {
	if m == Magic || m == V7 {
		return 2
	}
	return 4
}

// decodeBody decodes a snapshot file's bytes without their footer, the
// checksums checked (Decode).
func decodeBody(data []byte) (s *Snap, removed []string, base uint64, err error) {
	// The checksums can hold a body shorter than the header (a file
	// written wrong, or cut and sealed again): checked after them.
	if len(data) < HeaderLen {
		return nil, nil, 0, errors.New("snapshot shorter than its header")
	}
	id := binary.LittleEndian.Uint64(data[8:])
	base = binary.LittleEndian.Uint64(data[16:])
	if id == 0 {
		return nil, nil, 0, errors.New("snapshot without an id")
	}
	dims, rows := int(binary.LittleEndian.Uint32(data[24:])), int(binary.LittleEndian.Uint32(data[28:]))
	nremoved := int(binary.LittleEndian.Uint32(data[32:]))
	// The matrix alone needs rows × dims × 4 bytes, and each string at
	// least a byte: a header that claims more than the file holds is
	// damage, not a reason to allocate. (The checksum makes that
	// unlikely, not impossible: a file written wrong checks.) The product
	// is taken in 128 bits: two counts near 2^32 overflowed int64 to a
	// small or negative size, and the strings region was then sliced
	// past the file.
	format := string(data[:len(Magic)])
	v5, elem := format == V5, elemSize(format)
	hi, lo := bits.Mul64(uint64(rows), elem*uint64(dims))
	matBytes := int64(lo)
	var qpad, qBytes, sBytes uint64
	qok, sok := true, true
	if !v5 && dims > 0 {
		qpad, qBytes, qok = quantLayout(rows, dims, elem)
	}
	nsums := 0
	if format == Magic {
		nsums = int(binary.LittleEndian.Uint32(data[36:]))
		sBytes, sok = sumsLayout(nsums, max(dims, 0))
	}
	if dims <= 0 || hi != 0 || !qok || !sok || lo > uint64(len(data)) || qBytes > uint64(len(data)) || sBytes > uint64(len(data)) ||
		matBytes+int64(qBytes)+int64(sBytes)+int64(4*rows+nremoved) > int64(len(data)) {
		return nil, nil, 0, fmt.Errorf("snapshot header claims %d rows of %d dimensions and %d domain sums in %d bytes", rows, dims, nsums, len(data))
	}
	// The strings region is one string that every field slices (no
	// allocation per tool).
	strEnd := int64(len(data)) - int64(sBytes) - int64(qBytes) - matBytes
	if strEnd < HeaderLen {
		return nil, nil, 0, errors.New("snapshot is shorter than its matrix")
	}
	region := data[HeaderLen:strEnd]
	type span struct{ off, n int }
	spans := make([]span, 4*rows+nremoved)
	pos := 0
	for i := range spans {
		n, k := binary.Uvarint(region[pos:])
		if k <= 0 || uint64(len(region)-pos-k) < n {
			return nil, nil, 0, fmt.Errorf("snapshot row %d: bad string", i/4)
		}
		pos += k
		spans[i] = span{pos, int(n)}
		pos += int(n)
	}
	if pad := len(region) - pos; pad < 0 || pad >= Align {
		return nil, nil, 0, errors.New("snapshot strings do not end where the matrix starts")
	}
	var all string // the file's bytes, read-only (fileio.ReadMapped)
	if len(region) > 0 {
		all = unsafe.String(&region[0], len(region))
	}
	str := func(i int) string { return all[spans[i].off : spans[i].off+spans[i].n] }
	s = &Snap{ID: id, Dims: dims, IDs: make([]string, rows), Hash: make([]string, rows),
		Domain: Labels{Idx: make([]uint32, 0, rows)}, Group: Labels{Idx: make([]uint32, 0, rows)}}
	for i := 0; i < rows; i++ {
		s.IDs[i], s.Hash[i] = str(4*i), str(4*i+1)
		s.Domain.Add(str(4*i + 2))
		s.Group.Add(str(4*i + 3))
	}
	if nremoved > 0 {
		removed = make([]string, nremoved)
		for i := range removed {
			removed[i] = str(4*rows + i)
		}
	}
	if format != Magic {
		s.Format = format
	}
	if elem == 2 {
		s.Half = Uint16s(data[strEnd:], rows*dims)
	} else {
		s.Mat = Floats(data[strEnd:], rows*dims)
	}
	if format == Magic {
		// The sums are the domains' the rows name, in that order, or none
		// (a delta's): a count that differs is a file written wrong.
		if nsums != 0 && nsums != len(s.Domain.Names) {
			return nil, nil, 0, fmt.Errorf("snapshot holds the sums of %d domains, its rows name %d", nsums, len(s.Domain.Names))
		}
		s.Sums = Floats(data[len(data)-int(sBytes):], nsums*dims)
	}
	if v5 {
		// The format before the quantized rows: quantized here, as the
		// collection is read (a query reads it too, but writes nothing).
		s.Signs = Quantize(s.Mat, rows, dims)
		return s, removed, base, nil
	}
	s.Signs = &Signs{Words: (dims + 63) / 64}
	if rows > 0 {
		q := data[strEnd+matBytes:]
		s.Signs.Centre = Floats(q, dims)
		s.Signs.Bits = Uint64s(q[4*uint64(dims)+qpad:], rows*s.Signs.Words)
	}
	return s, removed, base, nil
}

// Uint16s returns the n little-endian uint16 values in b, in place when
// the machine is little endian and b aligned, else a decoded copy.
func Uint16s(b []byte, n int) []uint16 {
	if n == 0 {
		return nil
	}
	if LittleEndian && uintptr(unsafe.Pointer(&b[0]))%2 == 0 {
		return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out
}

// Uint64s returns the n little-endian uint64 values in b, in place when
// the machine is little endian and b aligned, else a decoded copy.
func Uint64s(b []byte, n int) []uint64 {
	if n == 0 {
		return nil
	}
	if LittleEndian && uintptr(unsafe.Pointer(&b[0]))%8 == 0 {
		return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out
}

// Salvage returns what of a snapshot file whose checksum fails can
// still be trusted: when the footer of checksums is whole and the chunks
// that fail theirs all lie in the matrix (after the header and strings),
// the snapshot with the rows those chunks hold marked dead, and how many
// rows that is; else ok is false. A bit flipped at 100k tools then costs
// the embedding of the few hundred tools in its MiB, not of all.
func Salvage(data []byte) (s *Snap, removed []string, base uint64, lost int, ok bool) {
	if len(data) < HeaderLen+checksum.MinFooter || !isSnap(data) {
		return nil, nil, 0, 0, false
	}
	body, bad, ok := checksum.BadChunks(data)
	if !ok || len(bad) == 0 || bad[0] == 0 {
		return nil, nil, 0, 0, false // the header is in chunk 0
	}
	s, removed, base, err := decodeBody(body)
	if err != nil {
		return nil, nil, 0, 0, false
	}
	var qBytes, sBytes uint64
	elem := elemSize(string(body[:len(Magic)]))
	if s.Format != V5 {
		_, qBytes, _ = quantLayout(len(s.IDs), s.Dims, elem)
	}
	if s.Format == "" {
		sBytes, _ = sumsLayout(len(s.Sums)/s.Dims, s.Dims)
	}
	matEnd := len(body) - int(qBytes) - int(sBytes)
	rowBytes := int(elem) * s.Dims
	strEnd := matEnd - rowBytes*len(s.IDs)
	if bad[0]*checksum.ChunkSize < strEnd || len(s.IDs) == 0 {
		return nil, nil, 0, 0, false // a string may have changed
	}
	// The quantized rows and the domain sums are derived from the matrix:
	// computed again from its rows, whatever chunks of them failed (the
	// sums by the writer, from the rows that are left).
	s.Signs = s.Quantized()
	s.Sums = nil
	s.Dead = make([]bool, len(s.IDs))
	for _, c := range bad {
		lo := c*checksum.ChunkSize - strEnd
		hi := min((c+1)*checksum.ChunkSize, matEnd) - strEnd
		if hi <= lo {
			continue // only quantized rows or domain sums
		}
		for r := lo / rowBytes; r <= (hi-1)/rowBytes && r < len(s.IDs); r++ {
			if !s.Dead[r] {
				s.Dead[r] = true
				s.NDead++
			}
		}
	}
	return s, removed, base, s.NDead, true
}

// LittleEndian is true on machines that store a float32 as the file does.
var LittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Floats returns the n little-endian float32 values in b: b itself, read
// in place, when the machine is little endian and b is aligned (the file
// keeps it alive), else a decoded copy.
func Floats(b []byte, n int) []float32 {
	if n == 0 {
		return nil
	}
	if LittleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
