package snapfile

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/internal/checksum"
)

// rowSums returns each domain's sum of the float16 rows of s as a file
// of the current format holds them, added row after row in float32, in
// the order the rows first name the domains: what a reader's centroids
// add up from the rows, computed here without DomainSums.
func rowSums(s *Snap) (names []string, sums [][]float32) {
	half := halfOf(s)
	at := map[string]int{}
	for i := range s.IDs {
		d := s.Domain.At(i)
		k, ok := at[d]
		if !ok {
			k = len(names)
			at[d] = k
			names = append(names, d)
			sums = append(sums, make([]float32, s.Dims))
		}
		for j, h := range half[i*s.Dims : (i+1)*s.Dims] {
			sums[k][j] += HalfFloat(h)
		}
	}
	return names, sums
}

// TestDomainSumsWritten: a file of the current format ends with each
// domain's vector sum, in the order its rows first name the domains,
// bit for bit what adding up its rows gives, and its header says how
// many; for a layer of float32 rows (Mat) too, whose file holds them
// rounded to float16; a layer without rows holds none.
func TestDomainSumsWritten(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *Snap
	}{
		{"float32 rows", testSnap(100, 0)},
		{"float16 rows", func() *Snap { s := testSnap(37, 5); s.Half, s.Mat = HalfRows(s.Mat), nil; return s }()},
		{"no rows", &Snap{Dims: testDims}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.snap")
			if err := Write(path, tc.s, nil, NewFileID(), 0); err != nil {
				t.Fatal(err)
			}
			got, _, _, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			names, want := rowSums(tc.s)
			if !slices.Equal(got.Domain.Names, names) || len(got.Sums) != len(names)*testDims {
				t.Fatalf("read %d sums' values for domains %q; want %d for %q", len(got.Sums), got.Domain.Names, len(names)*testDims, names)
			}
			for k, d := range names {
				if g := got.Sums[k*testDims : (k+1)*testDims]; !slices.Equal(g, want[k]) {
					t.Errorf("domain %s: sum %v, want %v", d, g, want[k])
				}
			}
			data, _ := checksum.Body(mustRead(t, path))
			if n := binary.LittleEndian.Uint32(data[36:]); int(n) != len(names) {
				t.Errorf("header says %d domain sums, want %d", n, len(names))
			}
		})
	}
}

// TestV7Reads: a file of the format before the domain sums
// ("TSSNAP07") reads as the same snapshot without them (Format says
// so, Sums nil: computed from the rows), and written again is a file of
// the current format with them.
func TestV7Reads(t *testing.T) {
	base, _ := snapSeeds(t)
	want, _, _, err := Decode(base)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _, err := Decode(toV7(t, base))
	if err != nil {
		t.Fatalf("Decode of a TSSNAP07 file: %v", err)
	}
	if got.Format != V7 || got.Sums != nil || !slices.Equal(got.Half, want.Half) || !slices.Equal(got.Signs.Bits, want.Signs.Bits) {
		t.Fatalf("TSSNAP07 read as format %q, %d sums' values, %d float16; want format %s, no sums, the current file's rows", got.Format, len(got.Sums), len(got.Half), V7)
	}
	path := filepath.Join(t.TempDir(), "c.snap")
	if err := Write(path, got, nil, got.ID, 0); err != nil {
		t.Fatal(err)
	}
	again, _, _, err := Read(path)
	if err != nil || again.Format != "" || !slices.Equal(again.Sums, want.Sums) {
		t.Fatalf("written again: %v, format %q, sums equal %v", err, again.Format, slices.Equal(again.Sums, want.Sums))
	}
}

// TestDomainSumsCountChecked: a header whose count of domain sums is
// not the number of domains the rows name (the file sealed again after
// the change, as a file written wrong would be) is refused, never read
// past its end.
func TestDomainSumsCountChecked(t *testing.T) {
	base, _ := snapSeeds(t)
	body, err := checksum.Body(base)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint32(body[36:])
	for _, claim := range []uint32{0, n - 1, n + 1, 1 << 31, ^uint32(0)} {
		b := slices.Clone(body)
		binary.LittleEndian.PutUint32(b[36:], claim)
		if s, _, _, err := Decode(checksum.Append(b)); err == nil {
			t.Errorf("header claiming %d domain sums (the file has %d) decoded, %d sums' values; want an error", claim, n, len(s.Sums))
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDeltaWithoutSums: a delta's file holds no domain sums (a reader
// adds its rows up one at a time): its header says 0 and it reads back
// without them.
func TestDeltaWithoutSums(t *testing.T) {
	_, delta := snapSeeds(t)
	s, _, base, err := Decode(delta)
	if err != nil || base == 0 {
		t.Fatalf("Decode(delta) = base %d, %v", base, err)
	}
	body, _ := checksum.Body(delta)
	if n := binary.LittleEndian.Uint32(body[36:]); n != 0 || s.Sums != nil {
		t.Errorf("a delta's file: header says %d domain sums, %d values read; want none", n, len(s.Sums))
	}
}
