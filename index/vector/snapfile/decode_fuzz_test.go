package snapfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fuzzcheck"
)

// testCol is index/vector's test collection ("test:hash16:16", 16
// dimensions): its files are named after it.
const (
	testColName = "test:hash16:16"
	testColFile = "dGVzdDpoYXNoMTY6MTY" // base64url of testColName
	testDims    = 16
)

// testSnap returns a snapshot of rows rows: IDs in order, domains and
// groups that repeat, unit vectors.
func testSnap(rows, from int) *Snap {
	s := &Snap{Dims: testDims}
	for i := from; i < from+rows; i++ {
		s.IDs = append(s.IDs, fmt.Sprintf("d%d__tool%03d", i%5, i))
		s.Hash = append(s.Hash, fmt.Sprintf("h%d", i))
		s.Domain.Add(fmt.Sprintf("d%d", i%5))
		s.Group.Add([]string{"", "g"}[i%2])
		v := make([]float32, testDims)
		var n float64
		for j := range v {
			v[j] = float32((i*7+j*3)%11) - 5
			n += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		s.Mat = append(s.Mat, v...)
	}
	return s
}

// snapSeeds returns a collection's snapshot file and a delta's for it,
// as index/vector's Store writes them (Write).
func snapSeeds(tb testing.TB) (base, delta []byte) {
	tb.Helper()
	dir := tb.TempDir()
	bid := NewFileID()
	for _, w := range []struct {
		path    string
		s       *Snap
		removed []string
		id, of  uint64
		out     *[]byte
	}{
		{filepath.Join(dir, "c.snap"), testSnap(100, 0), nil, bid, 0, &base},
		{filepath.Join(dir, "c.delta.snap"), testSnap(3, 100), []string{"d0__tool000", "d1__tool001"}, NewFileID(), bid, &delta},
	} {
		if err := Write(w.path, w.s, w.removed, w.id, w.of); err != nil {
			tb.Fatal(err)
		}
		var err error
		if *w.out, err = os.ReadFile(w.path); err != nil {
			tb.Fatal(err)
		}
	}
	return base, delta
}

// column returns a labels column's strings, a row each.
func column(l Labels) []string {
	out := make([]string, len(l.Idx))
	for i := range out {
		out[i] = l.At(i)
	}
	return out
}

// FuzzSnap decodes a snapshot file (Decode, what Read reads: a
// collection's or a delta's), seeded with a collection's file and a
// delta's as a store writes them, and mutations of them. With fix set,
// the footer of checksums is made to match (the input is taken as the
// body), so that the fuzzer reaches the header counts and strings behind
// them. Contract: an error, or a snapshot whose columns have its rows and
// whose matrix has rows × dims floats, that Write writes and Decode reads
// back the same; never a panic, never memory out of proportion to the
// input (the counts in the header are not trusted). A file that fails to
// decode is given to Salvage, as a store does: false, or a snapshot with
// at least one row dead and every column whole.
func FuzzSnap(f *testing.F) {
	base, delta := snapSeeds(f)
	for _, snap := range [][]byte{base, delta} {
		body := snap[:len(snap)-checksum.FooterLen(snap)]
		f.Add(snap, false)
		f.Add(body, true)
		for _, at := range []int{8, 16, 24, 28, 32, 36, HeaderLen, HeaderLen + 1, len(body) - 1} {
			b := bytes.Clone(body)
			b[at] ^= 0x80
			f.Add(b, true)
		}
		f.Add(body[:HeaderLen+10], true)
	}
	// The earlier format with float32 rows, read until the next write.
	old := toV6(f, base)
	f.Add(old, false)
	f.Add(old[:len(old)-checksum.FooterLen(old)-1], true)
	// The format before the domain sums.
	f.Add(toV7(f, base), false)
	path := filepath.Join(f.TempDir(), "c.snap")
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix {
			data = checksum.Append(bytes.Clone(data))
		}
		var (
			s       *Snap
			removed []string
			base    uint64
			err     error
		)
		fuzzcheck.Bounded(t, len(data), func() { s, removed, base, err = Decode(data) })
		if err != nil {
			if s != nil {
				t.Fatalf("Decode returned a snapshot and an error: %v", err)
			}
			// What a store salvages of a file that fails its checksum.
			var (
				ss   *Snap
				lost int
				ok   bool
			)
			fuzzcheck.Bounded(t, len(data), func() { ss, _, _, lost, ok = Salvage(data) })
			if ok && (lost < 1 || ss.NDead != lost || len(ss.Dead) != len(ss.IDs) || ss.Values() != len(ss.IDs)*ss.Dims) {
				t.Fatalf("Salvage: %d lost, %d dead of %d rows, %d floats of %d dimensions", lost, ss.NDead, len(ss.IDs), ss.Values(), ss.Dims)
			}
			return
		}
		rows := len(s.IDs)
		if len(s.Hash) != rows || len(column(s.Domain)) != rows || len(column(s.Group)) != rows || s.Values() != rows*s.Dims || s.Dims <= 0 ||
			s.Mat != nil && s.Half != nil {
			t.Fatalf("decoded snapshot: %d ids, %d hashes, %d domains, %d groups, %d floats of %d dimensions",
				rows, len(s.Hash), len(column(s.Domain)), len(column(s.Group)), s.Values(), s.Dims)
		}
		if s.ID == 0 {
			t.Fatal("decoded a snapshot without an id")
		}
		if s.Sums != nil && len(s.Sums) != len(s.Domain.Names)*s.Dims {
			t.Fatalf("decoded %d domain sums' values for %d domains of %d dimensions", len(s.Sums), len(s.Domain.Names), s.Dims)
		}
		if err := Write(path, s, removed, s.ID, base); err != nil {
			t.Fatalf("Write of a decoded snapshot: %v", err)
		}
		again, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s2, removed2, base2, err := Decode(again)
		if err != nil {
			t.Fatalf("a decoded snapshot, written again, does not decode: %v", err)
		}
		if !reflect.DeepEqual(s2.IDs, s.IDs) || !reflect.DeepEqual(s2.Hash, s.Hash) || !reflect.DeepEqual(column(s2.Domain), column(s.Domain)) ||
			!reflect.DeepEqual(column(s2.Group), column(s.Group)) || !slices.Equal(s2.Half, halfOf(s)) || s2.Dims != s.Dims ||
			!reflect.DeepEqual(removed2, removed) || base2 != base || s2.ID != s.ID {
			t.Fatalf("a decoded snapshot written again reads back differently")
		}
	})
}

// bodyAndSnap returns a sealed snapshot file's body and what it decodes to.
func bodyAndSnap(tb testing.TB, data []byte) ([]byte, *Snap) {
	tb.Helper()
	body, err := checksum.Body(data)
	if err != nil {
		tb.Fatal(err)
	}
	s, _, _, err := Decode(data)
	if err != nil {
		tb.Fatal(err)
	}
	return body, s
}

// toV6 returns a snapshot file of the current format as "TSSNAP06"
// wrote it: the float16 matrix as float32 (the same values), the bits
// after 0 or 4 bytes of padding, no domain sums, sealed again.
func toV6(tb testing.TB, data []byte) []byte {
	tb.Helper()
	body, s := bodyAndSnap(tb, data)
	rows, dims := len(s.IDs), s.Dims
	_, q, _ := QuantLayout(rows, dims)
	strEnd := len(body) - len(s.Sums)*4 - int(q) - 2*rows*dims
	old := bytes.Clone(body[:strEnd])
	copy(old, V6)
	binary.LittleEndian.PutUint32(old[36:], 0) // no domain sums before TSSNAP08
	for _, x := range FloatRows(s.Half) {
		old = binary.LittleEndian.AppendUint32(old, math.Float32bits(x))
	}
	for _, x := range s.Signs.Centre {
		old = binary.LittleEndian.AppendUint32(old, math.Float32bits(x))
	}
	for len(old)%8 != 0 {
		old = append(old, 0)
	}
	for _, w := range s.Signs.Bits {
		old = binary.LittleEndian.AppendUint64(old, w)
	}
	return checksum.Append(old)
}

// halfOf returns s's matrix as a file of the current format holds it:
// its Half, or its Mat (a file of an earlier format) rounded.
func halfOf(s *Snap) []uint16 {
	if s.Mat != nil {
		return HalfRows(s.Mat)
	}
	return s.Half
}

// twoFileSeeds returns the files of a collection in the two-file format
// that toolscout wrote before snapshots were the store of record
// (index/vector's testdata/twofile: the .gob and .delta.gob of
// indextest.DeltaCatalog's two catalogs, written by the last such
// toolscout; index/vector's migration tests read them too).
func twoFileSeeds(tb testing.TB) (gob, deltaGob []byte) {
	tb.Helper()
	var err error
	if gob, err = os.ReadFile(filepath.Join("..", "testdata", "twofile", testColFile+".gob")); err != nil {
		tb.Fatal(err)
	}
	if deltaGob, err = os.ReadFile(filepath.Join("..", "testdata", "twofile", testColFile+".delta.gob")); err != nil {
		tb.Fatal(err)
	}
	return gob, deltaGob
}

// FuzzExport decodes a collection file of the two-file format, read only
// to migrate it (DecodeExport: chromem-go exports in gob, then the export
// that holds their checksum), seeded with a .gob and a .delta.gob a real
// toolscout wrote and mutations, and reads its metadata as a delta's as
// the migration does (DeltaMeta). Contract: an error at each step, or
// documents; never a panic, never memory out of proportion to the input.
// (index/vector's snapshotOf, which makes the documents a layer, checks
// each one's dimensions and is tested there.)
func FuzzExport(f *testing.F) {
	gob, deltaGob := twoFileSeeds(f)
	for _, seed := range [][]byte{gob, deltaGob} {
		f.Add(seed)
		f.Add(seed[:len(seed)/2])
		for _, at := range []int{0, 3, len(seed) / 3, len(seed) - 10, len(seed) - 1} {
			b := bytes.Clone(seed)
			b[at] ^= 0x80
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// gob reads a message whose length it has not yet seen whole in
		// steps of about 10 MiB, whatever the length claims; the reader
		// buffers 1 MiB. Both fixed, neither a length trusted.
		fuzzcheck.BoundedSlack(t, len(data), 16<<20, func() {
			docs, meta, _, err := DecodeExport(bytes.NewReader(data), "fuzz.gob", testColName)
			if err != nil {
				if docs != nil || meta != nil {
					t.Fatalf("DecodeExport returned %d documents and an error: %v", len(docs), err)
				}
				return
			}
			DeltaMeta(meta)
		})
	})
}

// FuzzLegacyDocument decodes a document file of chromem-go's
// file-per-document layout, read only to migrate it (DecodesAs, as
// index/vector's healVectorDir checks each file before chromem-go reads
// it into the same fields), seeded with the two files chromem-go v0.7
// wrote for a collection of one document (testdata/legacy: the
// collection's 00000000.gob and the document's). Contract: true or
// false, never a panic, never memory out of proportion to the input.
func FuzzLegacyDocument(f *testing.F) {
	for _, name := range []string{"collection.gob", "document.gob"} {
		data, err := os.ReadFile(filepath.Join("testdata", "legacy", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
		b := bytes.Clone(data)
		b[len(b)/2] ^= 0x80
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// As in FuzzExport, gob reads a message in steps of about 10 MiB
		// whatever length it claims: "\xfd\xfd00" (4 bytes claiming 16 MB)
		// takes one step. Each decode gets that slack on its own.
		fuzzcheck.BoundedSlack(t, len(data), 16<<20, func() {
			var d Doc
			DecodesAs(bytes.NewReader(data), "fuzz.gob", &d)
		})
		fuzzcheck.BoundedSlack(t, len(data), 16<<20, func() {
			var m Meta
			DecodesAs(bytes.NewReader(data), "fuzz.gob", &m)
		})
	})
}

// toV7 returns a snapshot file of the current format as "TSSNAP07"
// wrote it: without the domain sums, the header's last word 0, sealed
// again.
func toV7(tb testing.TB, data []byte) []byte {
	tb.Helper()
	body, s := bodyAndSnap(tb, data)
	old := bytes.Clone(body[:len(body)-4*len(s.Sums)])
	copy(old, V7)
	binary.LittleEndian.PutUint32(old[36:], 0)
	return checksum.Append(old)
}
