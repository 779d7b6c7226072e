package snapfile

import "math"

// A "TSSNAP07" or later file holds each vector's dimensions as IEEE 754 binary16
// (float16) values: half the bytes of float32, on disk and in the pages a
// server maps, at a rounding error of at most 2^-11 of each value (the
// quantized pass and the re-scoring read them; measured against the
// float32 rows: docs/benchmarks/2026-12-06-data-dir-bytes.md). A float16
// written, read and written again keeps its bits, so a collection written
// again and again (a sync, a heal) drifts no further than the first
// rounding; per-row or per-dimension int8 scales, recomputed over the rows
// of each write, would not (and int8 per row found 98.8% of the float32
// scan's top 10 at 20k tools, float16 99.95%).

// halfTable maps each float16 to its float32 value: a query's dot
// products read it (256 KiB, in the cache while a layer is scanned).
// Read-only after init.
var halfTable = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = halfToFloat(uint16(h))
	}
	return &t
}()

// HalfFloat returns the float32 value of the float16 h.
func HalfFloat(h uint16) float32 { return halfTable[h] }

// halfToFloat converts a float16 to float32 (exact: every float16 is a
// float32).
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf, NaN
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	case man == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: man × 2^-24.
	f := float32(man) * (1.0 / (1 << 24))
	if sign != 0 {
		f = -f
	}
	return f
}

// Half returns the float16 nearest to f (ties to even); beyond the
// largest float16 (65504) it is ±Inf, a NaN stays a NaN.
func Half(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00 // NaN
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal or zero: the value in units of 2^-24, rounded.
		if e < -10 {
			return sign
		}
		m := man | 0x800000
		shift := uint32(14 - e)
		h := m >> shift
		rest := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || rest == half && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rest := man & 0x1fff
	if rest > 0x1000 || rest == 0x1000 && h&1 == 1 {
		h++ // may carry into the exponent, up to Inf: correct
	}
	return sign | uint16(h)
}

// HalfRows returns the float16 form of the matrix mat.
func HalfRows(mat []float32) []uint16 {
	out := make([]uint16, len(mat))
	for i, x := range mat {
		out[i] = Half(x)
	}
	return out
}

// FloatRows returns the float32 values of the float16 matrix half.
func FloatRows(half []uint16) []float32 {
	out := make([]float32, len(half))
	for i, h := range half {
		out[i] = halfTable[h]
	}
	return out
}

// HalfRow converts the float16 values src into dst (at least as long),
// as HalfFloat does, without its table: a query converts each row it
// scores (a table of 256 KiB, read at random, made a 20k-tool exact scan
// 8 times slower than float32's under load; this is a few integer
// operations and a multiply a value). Inf and NaN come out as finite
// values from 65,536 to 131,008, not as themselves: the rows a store
// writes are L2-normalised and hold neither.
func HalfRow(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		// The exponent and mantissa, moved to float32's places, are the
		// value times 2^-112 (a float16 subnormal a float32 subnormal).
		f := math.Float32frombits(uint32(h&0x7fff)<<13) * 0x1p112
		dst[i] = math.Float32frombits(math.Float32bits(f) | uint32(h&0x8000)<<16)
	}
}
