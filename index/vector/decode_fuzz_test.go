package vector

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fuzzcheck"
	"github.com/toolscout/toolscout/internal/indextest"
)

// vectorSeeds returns the collection file (.gob) and snapshot (.snap)
// that a real Store wrote for the small catalog, and the .gob's path.
func vectorSeeds(tb testing.TB) (gob, snap []byte, gobPath string) {
	tb.Helper()
	st, err := Open(filepath.Join(tb.TempDir(), "vectors"))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := st.Sync(context.Background(), testCol, indextest.MustCatalog(tb, indextest.SmallCatalog), &indextest.CountingEmbedder{}, SyncOptions{}); err != nil {
		tb.Fatal(err)
	}
	gobPath = st.fileOf(testCol.Name())
	if gob, err = os.ReadFile(gobPath); err != nil {
		tb.Fatal(err)
	}
	if snap, err = os.ReadFile(snapPathOf(gobPath)); err != nil {
		tb.Fatal(err)
	}
	return gob, snap, gobPath
}

// FuzzSnap decodes a snapshot file (decodeSnap, what readSnap reads),
// seeded with the .snap a real Store wrote and mutations of it. With fix
// set, the .gob tag in the head is made that of the collection file and
// the footer of checksums is made to match (the input is taken as the
// body), so that the fuzzer reaches the header counts and strings behind
// them. Contract: an error, or a snapshot whose columns have its rows
// and whose matrix has rows × dims floats, that writeSnap writes and
// decodeSnap reads back the same; never a panic, never memory out of
// proportion to the input (the counts in the header are not trusted).
func FuzzSnap(f *testing.F) {
	_, snap, _ := vectorSeeds(f)
	body := snap[:len(snap)-checksum.FooterLen(snap)]
	f.Add(snap, false)
	f.Add(body, true)
	for _, at := range []int{24, 28, 32, snapHeader, snapHeader + 1, len(body) - 1} {
		b := bytes.Clone(body)
		b[at] ^= 0x80
		f.Add(b, true)
	}
	f.Add(body[:snapHeader+10], true)
	gobPath := filepath.Join(f.TempDir(), "c.gob")
	if err := os.WriteFile(gobPath, []byte("x"), 0o644); err != nil {
		f.Fatal(err)
	}
	gt, err := tagOf(gobPath)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix {
			data = bytes.Clone(data)
			if len(data) >= 24 {
				binary.LittleEndian.PutUint64(data[8:], uint64(gt.size))
				binary.LittleEndian.PutUint64(data[16:], uint64(gt.mtime))
			}
			data = checksum.Append(data)
		}
		var (
			s       *snapshot
			removed []string
			base    fileTag
			err     error
		)
		fuzzcheck.Bounded(t, len(data), func() { s, removed, base, err = decodeSnap(data, gt) })
		if err != nil {
			if s != nil {
				t.Fatalf("decodeSnap returned a snapshot and an error: %v", err)
			}
			return
		}
		rows := len(s.ids)
		if len(s.hash) != rows || len(column(s.domain)) != rows || len(column(s.group)) != rows || len(s.mat) != rows*s.dims || s.dims <= 0 {
			t.Fatalf("decoded snapshot: %d ids, %d hashes, %d domains, %d groups, %d floats of %d dimensions",
				rows, len(s.hash), len(column(s.domain)), len(column(s.group)), len(s.mat), s.dims)
		}
		if err := writeSnap(gobPath, s, removed, base); err != nil {
			t.Fatalf("writeSnap of a decoded snapshot: %v", err)
		}
		again, err := os.ReadFile(snapPathOf(gobPath))
		if err != nil {
			t.Fatal(err)
		}
		s2, removed2, base2, err := decodeSnap(again, gt)
		if err != nil {
			t.Fatalf("a decoded snapshot, written again, does not decode: %v", err)
		}
		if !reflect.DeepEqual(s2.ids, s.ids) || !reflect.DeepEqual(s2.hash, s.hash) || !reflect.DeepEqual(column(s2.domain), column(s.domain)) ||
			!reflect.DeepEqual(column(s2.group), column(s.group)) || !sameBits(s2.mat, s.mat) || s2.dims != s.dims ||
			!reflect.DeepEqual(removed2, removed) || base2 != base {
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

// FuzzExport decodes a collection file (decodeExport, what readExport
// reads: chromem-go exports in gob, then the export that holds their
// checksum), seeded with the .gob a real Store wrote and mutations, and
// turns its documents into a snapshot as opening a store does
// (snapshotOf). Contract: an error at either step, or a snapshot of one
// row per document; never a panic, never memory out of proportion to the
// input.
func FuzzExport(f *testing.F) {
	gob, _, _ := vectorSeeds(f)
	f.Add(gob)
	f.Add(gob[:len(gob)/2])
	for _, at := range []int{0, 3, len(gob) / 3, len(gob) - 10, len(gob) - 1} {
		b := bytes.Clone(gob)
		b[at] ^= 0x80
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// gob reads a message whose length it has not yet seen whole in
		// steps of about 10 MiB, whatever the length claims; the reader
		// buffers 1 MiB. Both fixed, neither a length trusted.
		fuzzcheck.BoundedSlack(t, len(data), 16<<20, func() {
			docs, _, _, err := decodeExport(bytes.NewReader(data), "fuzz.gob", testCol.Name())
			if err != nil {
				return
			}
			s, err := snapshotOf(docs, testCol.Dims)
			if err == nil && len(s.ids) != len(docs) {
				t.Fatalf("snapshotOf(%d documents) has %d rows", len(docs), len(s.ids))
			}
		})
	})
}
