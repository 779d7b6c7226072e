package snapfile

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// TestHalfRoundTrip: every float16 converts to a float32 and back to
// itself (NaNs to a NaN), so a collection written again keeps its bits.
func TestHalfRoundTrip(t *testing.T) {
	all := make([]uint16, 1<<16)
	for h := range all {
		all[h] = uint16(h)
	}
	row := make([]float32, len(all))
	HalfRow(row, all)
	for h := 0; h < 1<<16; h++ {
		f := HalfFloat(uint16(h))
		if h&0x7c00 != 0x7c00 && math.Float32bits(row[h]) != math.Float32bits(f) {
			t.Fatalf("HalfRow of %#04x = %g, HalfFloat %g", h, row[h], f)
		}
		got := Half(f)
		if math.IsNaN(float64(f)) {
			if got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
				t.Fatalf("Half(NaN from %#04x) = %#04x, want a NaN", h, got)
			}
			continue
		}
		if got != uint16(h) {
			t.Fatalf("Half(HalfFloat(%#04x) = %g) = %#04x", h, f, got)
		}
	}
}

// TestHalfNearest: Half gives the float16 nearest to a float32 (ties to
// the even one), checked against the two float16 neighbours of random
// values of every magnitude a float16 holds, and beyond.
func TestHalfNearest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		f := float32(math.Ldexp(r.Float64()*2-1, r.IntN(50)-30))
		h := Half(f)
		got := float64(HalfFloat(h))
		if math.Abs(float64(f)) > 65520 {
			if !math.IsInf(got, 0) {
				t.Fatalf("Half(%g) = %g, want Inf", f, got)
			}
			continue
		}
		for _, n := range []uint16{h + 1, h - 1} {
			alt := float64(HalfFloat(n))
			if math.IsNaN(alt) || math.IsInf(alt, 0) || (alt < 0) != (got < 0) && got != 0 {
				continue
			}
			d, da := math.Abs(got-float64(f)), math.Abs(alt-float64(f))
			if da < d || da == d && h&1 == 1 {
				t.Fatalf("Half(%g) = %#04x (%g), but %#04x (%g) is nearer or an even tie", f, h, got, n, alt)
			}
		}
	}
}

// TestV6Reads: a file of the format with float32 rows ("TSSNAP06") reads
// as the same snapshot, its values as float32 (Format says so), and
// written again is a file of the current format holding the same bits.
func TestV6Reads(t *testing.T) {
	base, _ := snapSeeds(t)
	want, _, _, err := Decode(base)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _, err := Decode(toV6(t, base))
	if err != nil {
		t.Fatalf("Decode of a TSSNAP06 file: %v", err)
	}
	if got.Format != V6 || got.Half != nil || !slices.Equal(HalfRows(got.Mat), want.Half) || !slices.Equal(got.Signs.Bits, want.Signs.Bits) {
		t.Fatalf("TSSNAP06 read as format %q, %d float32 values, %d float16; want its float32 values equal to the current file's", got.Format, len(got.Mat), len(got.Half))
	}
	path := filepath.Join(t.TempDir(), "c.snap")
	if err := Write(path, got, nil, got.ID, 0); err != nil {
		t.Fatal(err)
	}
	again, _, _, err := Read(path)
	if err != nil || again.Format != "" || !slices.Equal(again.Half, want.Half) {
		t.Fatalf("written again: %v, format %q", err, again.Format)
	}
}
