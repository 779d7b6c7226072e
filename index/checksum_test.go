package index

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand"
	"testing"
)

// footerLen is the length of the footer of checksums that ends data.
func footerLen(data []byte) int {
	return 4*int(binary.LittleEndian.Uint32(data[len(data)-8:])) + minFooter
}

// TestChecksums: what writeChecks wrote comes back whole from
// checkedBody, at every size around the chunks' bounds; appendChecks
// writes the same. A byte changed anywhere (the body, a chunk's CRC,
// the count, the footer's CRC) or a file cut short is errChecksum.
func TestChecksums(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 100, checkChunk - 1, checkChunk, checkChunk + 1, 3*checkChunk + 5} {
		body := make([]byte, n)
		rng.Read(body)
		var buf bytes.Buffer
		if err := writeChecks(&buf, func(w *bufio.Writer) error {
			// In pieces of odd sizes, across the chunks' bounds.
			for rest := body; len(rest) > 0; {
				k := min(len(rest), 1+rng.Intn(300000))
				w.Write(rest[:k])
				rest = rest[k:]
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		if want := appendChecks(bytes.Clone(body)); !bytes.Equal(data, want) {
			t.Fatalf("%d bytes: writeChecks and appendChecks differ", n)
		}
		if chunks := (n + checkChunk - 1) / checkChunk; footerLen(data) != 4*chunks+minFooter {
			t.Fatalf("%d bytes: footer of %d bytes, want %d chunks' CRCs", n, footerLen(data), chunks)
		}
		got, err := checkedBody(data)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%d bytes: checkedBody = %d bytes, %v; want the body", n, len(got), err)
		}
		positions := []int{0, len(data) / 2, len(data) - 1}
		for i := 0; i < 40; i++ {
			positions = append(positions, rng.Intn(len(data)))
		}
		for at := len(data) - footerLen(data); at < len(data); at++ {
			positions = append(positions, at)
		}
		for _, at := range positions {
			damaged := bytes.Clone(data)
			damaged[at] ^= 1 << rng.Intn(8)
			if _, err := checkedBody(damaged); !errors.Is(err, errChecksum) {
				t.Fatalf("%d bytes, byte %d of %d changed: checkedBody = %v, want errChecksum", n, at, len(data), err)
			}
		}
		for _, cut := range []int{0, 1, minFooter - 1, len(data) - 1} {
			if cut >= len(data) {
				continue
			}
			if _, err := checkedBody(data[:cut]); !errors.Is(err, errChecksum) {
				t.Fatalf("%d bytes cut to %d: checkedBody = %v, want errChecksum", n, cut, err)
			}
		}
	}
}
