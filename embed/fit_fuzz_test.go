package embed

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/toolscout/toolscout/internal/fuzzcheck"
)

// FuzzLoadFit reads the built-in embedder's part of a fit file (LoadFit;
// index/store's FuzzFit fuzzes the file around it), seeded with what
// SaveFit writes after fitting a few documents, and with mutations.
// Contract: an error that leaves the loaded weights as they were, or
// weights that SaveFit writes back byte for byte; never a panic, never
// memory out of proportion to the input (the count in the head is not
// trusted).
func FuzzLoadFit(f *testing.F) {
	a := NewBuiltin(BuiltinOptions{})
	a.Fit([]string{"read a file from disk", "write a file to disk", "send a chat message", "list the open issues"})
	var buf bytes.Buffer
	if err := a.SaveFit(&buf); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(good[:len(fitMagic)+4])
	for _, at := range []int{len(fitMagic), len(fitMagic) + 4, len(fitMagic) + 4 + 12 + 7} {
		b := bytes.Clone(good)
		b[at] ^= 0x80
		f.Add(b)
	}
	huge := bytes.Clone(good[:len(fitMagic)+4])
	binary.LittleEndian.PutUint32(huge[len(fitMagic):], 0xffffffff)
	f.Add(huge)
	b := NewBuiltin(BuiltinOptions{}) // one per worker: inputs run one at a time
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := b.LoadFit(bytes.NewReader(good)); err != nil {
			t.Fatal(err)
		}
		var err error
		fuzzcheck.Bounded(t, len(data), func() { err = b.LoadFit(bytes.NewReader(data)) })
		var out bytes.Buffer
		if err := b.SaveFit(&out); err != nil {
			t.Fatal(err)
		}
		switch {
		case err != nil && !bytes.Equal(out.Bytes(), good):
			t.Fatalf("LoadFit failed (%v) but changed the weights", err)
		case err == nil && !bytes.Equal(out.Bytes(), data):
			t.Fatalf("LoadFit took %d bytes that SaveFit writes as %d others", len(data), out.Len())
		}
	})
}
