package vector

import (
	"bytes"
	"context"
	"encoding/base64"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	chromem "github.com/philippgille/chromem-go"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fuzzcheck"
	"github.com/toolscout/toolscout/internal/indextest"
)

// vectorSeeds returns the snapshot files (.snap, .delta.snap) that a
// real Store wrote for two catalogs, the second a small change of the
// first.
func vectorSeeds(tb testing.TB) (base, delta []byte) {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "vectors")
	a := indextest.DeltaCatalog(tb, nil, nil)
	b := indextest.DeltaCatalog(tb, []string{"new1"}, func(d, i int, tool map[string]any) bool {
		if d == 1 && i < 3 {
			tool["description"] = "Changed."
		}
		return !(d == 2 && i == 0)
	})
	for _, cat := range []*index.Catalog{a, b} {
		st, err := Open(dir)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := st.Sync(context.Background(), testCol, cat, &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	path := (&Store{dir: dir}).fileOf(testCol.Name())
	var err error
	if base, err = os.ReadFile(path); err != nil {
		tb.Fatal(err)
	}
	if delta, err = os.ReadFile(deltaFileOf(path)); err != nil {
		tb.Fatal(err)
	}
	return base, delta
}

// FuzzSnap decodes a snapshot file (decodeSnap, what readSnap reads: a
// collection's or a delta's), seeded with the files a real Store wrote
// and mutations of them. With fix set, the footer of checksums is made to
// match (the input is taken as the body), so that the fuzzer reaches the
// header counts and strings behind them. Contract: an error, or a
// snapshot whose columns have its rows and whose matrix has rows × dims
// floats, that writeSnap writes and decodeSnap reads back the same;
// never a panic, never memory out of proportion to the input (the counts
// in the header are not trusted). A file that fails to decode is given
// to salvageSnap, as a store does: false, or a snapshot with at least one
// row dead and every column whole.
func FuzzSnap(f *testing.F) {
	base, delta := vectorSeeds(f)
	for _, snap := range [][]byte{base, delta} {
		body := snap[:len(snap)-checksum.FooterLen(snap)]
		f.Add(snap, false)
		f.Add(body, true)
		for _, at := range []int{8, 16, 24, 28, 32, snapHeader, snapHeader + 1, len(body) - 1} {
			b := bytes.Clone(body)
			b[at] ^= 0x80
			f.Add(b, true)
		}
		f.Add(body[:snapHeader+10], true)
	}
	path := filepath.Join(f.TempDir(), "c.snap")
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix {
			data = checksum.Append(bytes.Clone(data))
		}
		var (
			s       *snapshot
			removed []string
			base    uint64
			err     error
		)
		fuzzcheck.Bounded(t, len(data), func() { s, removed, base, err = decodeSnap(data) })
		if err != nil {
			if s != nil {
				t.Fatalf("decodeSnap returned a snapshot and an error: %v", err)
			}
			// What a store salvages of a file that fails its checksum.
			var (
				ss   *snapshot
				lost int
				ok   bool
			)
			fuzzcheck.Bounded(t, len(data), func() { ss, _, _, lost, ok = salvageSnap(data) })
			if ok && (lost < 1 || ss.ndead != lost || len(ss.dead) != len(ss.ids) || len(ss.mat) != len(ss.ids)*ss.dims) {
				t.Fatalf("salvageSnap: %d lost, %d dead of %d rows, %d floats of %d dimensions", lost, ss.ndead, len(ss.ids), len(ss.mat), ss.dims)
			}
			return
		}
		rows := len(s.ids)
		if len(s.hash) != rows || len(column(s.domain)) != rows || len(column(s.group)) != rows || len(s.mat) != rows*s.dims || s.dims <= 0 {
			t.Fatalf("decoded snapshot: %d ids, %d hashes, %d domains, %d groups, %d floats of %d dimensions",
				rows, len(s.hash), len(column(s.domain)), len(column(s.group)), len(s.mat), s.dims)
		}
		if s.id == 0 {
			t.Fatal("decoded a snapshot without an id")
		}
		if err := writeSnap(path, s, removed, s.id, base); err != nil {
			t.Fatalf("writeSnap of a decoded snapshot: %v", err)
		}
		again, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s2, removed2, base2, err := decodeSnap(again)
		if err != nil {
			t.Fatalf("a decoded snapshot, written again, does not decode: %v", err)
		}
		if !reflect.DeepEqual(s2.ids, s.ids) || !reflect.DeepEqual(s2.hash, s.hash) || !reflect.DeepEqual(column(s2.domain), column(s.domain)) ||
			!reflect.DeepEqual(column(s2.group), column(s.group)) || !sameBits(s2.mat, s.mat) || s2.dims != s.dims ||
			!reflect.DeepEqual(removed2, removed) || base2 != base || s2.id != s.id {
			t.Fatalf("a decoded snapshot written again reads back differently")
		}
	})
}

// sameBits compares float slices bit for bit (NaNs included).
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// twoFileSeeds returns the files of a collection in the two-file format
// that toolscout wrote before snapshots were the store of record
// (testdata/twofile: the .gob, .delta.gob and their snapshots of
// deltaCatalogs' two catalogs, written by the last such toolscout).
func twoFileSeeds(tb testing.TB) (gob, deltaGob []byte) {
	tb.Helper()
	name := base64.RawURLEncoding.EncodeToString([]byte(testCol.Name()))
	var err error
	if gob, err = os.ReadFile(filepath.Join("testdata", "twofile", name+".gob")); err != nil {
		tb.Fatal(err)
	}
	if deltaGob, err = os.ReadFile(filepath.Join("testdata", "twofile", name+".delta.gob")); err != nil {
		tb.Fatal(err)
	}
	return gob, deltaGob
}

// FuzzExport decodes a collection file of the two-file format, read only
// to migrate it (decodeExport: chromem-go exports in gob, then the export
// that holds their checksum), seeded with a .gob and a .delta.gob a real
// toolscout wrote and mutations, and turns its documents into a snapshot
// and its metadata into a delta's as the migration does (snapshotOf,
// deltaMeta). Contract: an error at each step, or a snapshot of one row
// per document; never a panic, never memory out of proportion to the
// input.
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
			docs, meta, _, err := decodeExport(bytes.NewReader(data), "fuzz.gob", testCol.Name())
			if err != nil {
				return
			}
			deltaMeta(meta)
			s, err := snapshotOf(docs, testCol.Dims)
			if err == nil && len(s.ids) != len(docs) {
				t.Fatalf("snapshotOf(%d documents) has %d rows", len(docs), len(s.ids))
			}
		})
	})
}

// FuzzLegacyDocument decodes a document file of chromem-go's
// file-per-document layout, read only to migrate it (decodesAs, as
// healVectorDir checks each file before chromem-go reads it into the
// same fields), seeded with a file chromem-go wrote. Contract: true or
// false, never a panic, never memory out of proportion to the input.
func FuzzLegacyDocument(f *testing.F) {
	dir := filepath.Join(f.TempDir(), "vectors")
	db, err := chromem.NewPersistentDB(dir, false)
	if err != nil {
		f.Fatal(err)
	}
	c, err := db.GetOrCreateCollection(testCol.Name(), map[string]string{"k": "v"}, noEmbed)
	if err != nil {
		f.Fatal(err)
	}
	doc := chromem.Document{ID: "d__tool", Embedding: normalized(indextest.HashVec("alpha bravo")), Metadata: map[string]string{"hash": "h", "domain": "d"}}
	if err := c.AddDocument(context.Background(), doc); err != nil {
		f.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.gob"))
	if len(files) != 2 {
		f.Fatalf("chromem-go wrote %v, want the collection's file and the document's", files)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
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
			var d chromemDoc
			decodesAs(bytes.NewReader(data), "fuzz.gob", &d)
		})
		fuzzcheck.BoundedSlack(t, len(data), 16<<20, func() {
			var m chromemMeta
			decodesAs(bytes.NewReader(data), "fuzz.gob", &m)
		})
	})
}
