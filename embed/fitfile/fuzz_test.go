package fitfile

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/internal/fuzzcheck"
)

// FuzzLoadFit reads the built-in embedder's part of a fit file (Read,
// what embed.Builtin's LoadFit reads; index/store/format's FuzzFit
// fuzzes the file around it), seeded with a saved fit of a few weights
// (embed's TestSaveLoadFit checks that Builtin writes this format and
// keeps its weights when a read fails), and with mutations. Contract: an
// error and nothing read, or weights that Write writes back byte for
// byte; never a panic, never memory out of proportion to the input (the
// count in the head is not trusted). Check agrees with Read, and Find
// finds every weight Read reads.
func FuzzLoadFit(f *testing.F) {
	hash := []uint64{3, 17, 1 << 40, 1<<63 + 5}
	weight := []float32{0.5, 1.25, 2, 3.75}
	var buf bytes.Buffer
	if err := Write(&buf, hash, weight); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(good[:len(Magic)+4])
	for _, at := range []int{len(Magic), len(Magic) + 4, len(Magic) + 4 + 12 + 7} {
		b := bytes.Clone(good)
		b[at] ^= 0x80
		f.Add(b)
	}
	huge := bytes.Clone(good[:len(Magic)+4])
	binary.LittleEndian.PutUint32(huge[len(Magic):], 0xffffffff)
	f.Add(huge)
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			h   []uint64
			w   []float32
			err error
		)
		fuzzcheck.Bounded(t, len(data), func() { h, w, err = Read(bytes.NewReader(data)) })
		recs, cerr := Check(data)
		if (cerr == nil) != (err == nil) {
			t.Fatalf("Read: %v, but Check: %v", err, cerr)
		}
		if err != nil {
			if h != nil || w != nil {
				t.Fatalf("Read failed (%v) but returned %d weights", err, len(w))
			}
			return
		}
		// Read in place, the weights are the ones Read copies, found by
		// hash; a hash between two is not found.
		for i := range h {
			if got, ok := recs.Find(h[i]); !ok || got != w[i] && !(got != got && w[i] != w[i]) {
				t.Fatalf("Find(%x) = %v, %v, want %v", h[i], got, ok, w[i])
			}
			if h[i] > 0 && (i == 0 || h[i-1] < h[i]-1) {
				if _, ok := recs.Find(h[i] - 1); ok {
					t.Fatalf("Find(%x) found a hash the fit does not have", h[i]-1)
				}
			}
		}
		if recs.Len() != len(h) {
			t.Fatalf("Check found %d features, Read %d", recs.Len(), len(h))
		}
		if len(h) != len(w) || !slices.IsSorted(h) {
			t.Fatalf("Read returned %d hashes, %d weights (sorted: %v)", len(h), len(w), slices.IsSorted(h))
		}
		var out bytes.Buffer
		if err := Write(&out, h, w); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("Read took %d bytes that Write writes as %d others", len(data), out.Len())
		}
	})
}
