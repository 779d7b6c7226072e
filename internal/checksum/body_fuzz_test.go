package checksum

import (
	"bufio"
	"bytes"
	"errors"
	"testing"

	"github.com/toolscout/toolscout/internal/fuzzcheck"
)

// FuzzBody reads a footer of checksums (Body), what every sealed file of
// the data dir is checked with first (vector snapshots, fit files, the
// keyword index's field lengths), seeded with what Write writes for an
// empty, a small and a two-chunk body, and mutations. Contract:
// ErrMismatch, or a body that is data's beginning and that Append seals
// to data again; never a panic, never memory from the footer's count.
func FuzzBody(f *testing.F) {
	for _, n := range []int{0, 100, checkChunk + 5} {
		var buf bytes.Buffer
		if err := Write(&buf, func(w *bufio.Writer) error { _, err := w.Write(bytes.Repeat([]byte{'x'}, n)); return err }); err != nil {
			f.Fatal(err)
		}
		good := buf.Bytes()
		f.Add(good)
		for _, at := range []int{0, len(good) - 1, len(good) - 5, len(good) - 9} {
			if at >= 0 {
				b := bytes.Clone(good)
				b[at] ^= 0x10
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			body []byte
			err  error
		)
		fuzzcheck.Bounded(t, len(data), func() { body, err = Body(data) })
		if err != nil {
			if !errors.Is(err, ErrMismatch) || body != nil {
				t.Fatalf("Body = %d bytes, %v; want ErrMismatch and none", len(body), err)
			}
			return
		}
		if !bytes.Equal(Append(bytes.Clone(body)), data) {
			t.Fatalf("Body took %d of %d bytes that Append does not seal to the same", len(body), len(data))
		}
	})
}
