package checksum

import (
	"bufio"
	"bytes"
	"errors"
	"math/rand"
	"slices"
	"testing"
)

// TestChecksums: what Write wrote comes back whole from
// Body, at every size around the chunks' bounds; Append
// writes the same. A byte changed anywhere (the body, a chunk's CRC,
// the count, the footer's CRC) or a file cut short is ErrMismatch.
func TestChecksums(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 100, checkChunk - 1, checkChunk, checkChunk + 1, 3*checkChunk + 5} {
		body := make([]byte, n)
		rng.Read(body)
		var buf bytes.Buffer
		if err := Write(&buf, func(w *bufio.Writer) error {
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
		if want := Append(bytes.Clone(body)); !bytes.Equal(data, want) {
			t.Fatalf("%d bytes: Write and Append differ", n)
		}
		if chunks := (n + checkChunk - 1) / checkChunk; FooterLen(data) != 4*chunks+MinFooter {
			t.Fatalf("%d bytes: footer of %d bytes, want %d chunks' CRCs", n, FooterLen(data), chunks)
		}
		got, err := Body(data)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%d bytes: Body = %d bytes, %v; want the body", n, len(got), err)
		}
		positions := []int{0, len(data) / 2, len(data) - 1}
		for i := 0; i < 40; i++ {
			positions = append(positions, rng.Intn(len(data)))
		}
		for at := len(data) - FooterLen(data); at < len(data); at++ {
			positions = append(positions, at)
		}
		for _, at := range positions {
			damaged := bytes.Clone(data)
			damaged[at] ^= 1 << rng.Intn(8)
			if _, err := Body(damaged); !errors.Is(err, ErrMismatch) {
				t.Fatalf("%d bytes, byte %d of %d changed: Body = %v, want ErrMismatch", n, at, len(data), err)
			}
		}
		for _, cut := range []int{0, 1, MinFooter - 1, len(data) - 1} {
			if cut >= len(data) {
				continue
			}
			if _, err := Body(data[:cut]); !errors.Is(err, ErrMismatch) {
				t.Fatalf("%d bytes cut to %d: Body = %v, want ErrMismatch", n, cut, err)
			}
		}
	}
}

// TestBadChunks: with the footer whole, BadChunks names exactly the
// chunks whose bytes changed; with the footer damaged it tells nothing.
func TestBadChunks(t *testing.T) {
	body := make([]byte, 2*ChunkSize+ChunkSize/2)
	for i := range body {
		body[i] = byte(i * 7)
	}
	whole := Append(slices.Clone(body))
	if b, bad, ok := BadChunks(whole); !ok || len(bad) != 0 || len(b) != len(body) {
		t.Fatalf("BadChunks(whole) = %d bytes, %v, %v", len(b), bad, ok)
	}
	for _, tc := range []struct {
		at   []int
		want []int
	}{
		{[]int{ChunkSize + 5}, []int{1}},
		{[]int{0, 2*ChunkSize + 1}, []int{0, 2}},
		{[]int{len(body) - 1}, []int{2}},
	} {
		data := slices.Clone(whole)
		for _, at := range tc.at {
			data[at] ^= 0x10
		}
		if _, bad, ok := BadChunks(data); !ok || !slices.Equal(bad, tc.want) {
			t.Errorf("bytes %v changed: BadChunks = %v, %v; want %v", tc.at, bad, ok, tc.want)
		}
		if _, err := Body(data); err == nil {
			t.Errorf("bytes %v changed: Body passed", tc.at)
		}
	}
	for _, at := range []int{len(whole) - 1, len(whole) - 6, len(whole) - 9} {
		data := slices.Clone(whole)
		data[at] ^= 0x10
		if _, _, ok := BadChunks(data); ok {
			t.Errorf("footer byte %d changed: BadChunks still tells chunks apart", at)
		}
	}
}
