package snapfile

import (
	"math"
	"math/bits"
)

// Signs are the quantized rows of a snapshot (index/vector's quant.go
// says how a query uses them): one sign bit per dimension of each row,
// taken around the dimension's mean over the rows (Centre). The bits and
// centres are written in the snapshot file after the matrix and so
// computed once, when a collection is written (index/vector's flat and
// Sync) or read from a file of the earlier format: never by a query.
type Signs struct {
	Words  int       // uint64 words per row: ceil(dims/64)
	Centre []float32 // dims
	Bits   []uint64  // rows × words
}

// Quantize returns the sign bits of the rows × dims matrix mat.
// A layer without rows has no centre either (QuantLayout): the
// dimension of an empty file is not allocated for.
func Quantize(mat []float32, rows, dims int) *Signs {
	return quantize(mat, rows, dims, func(x float32) float32 { return x })
}

// QuantizeHalf is Quantize of a float16 matrix (half.go).
func QuantizeHalf(half []uint16, rows, dims int) *Signs {
	return quantize(half, rows, dims, HalfFloat)
}

func quantize[T float32 | uint16](mat []T, rows, dims int, val func(T) float32) *Signs {
	sg := &Signs{Words: (dims + 63) / 64}
	if rows == 0 {
		return sg
	}
	sg.Centre, sg.Bits = make([]float32, dims), make([]uint64, rows*sg.Words)
	sum := make([]float64, dims)
	for i := 0; i < rows; i++ {
		for j, x := range mat[i*dims : (i+1)*dims] {
			sum[j] += float64(val(x))
		}
	}
	for j := range sum {
		sg.Centre[j] = float32(sum[j] / float64(rows))
	}
	for i := 0; i < rows; i++ {
		w := sg.Bits[i*sg.Words : (i+1)*sg.Words]
		for j, x := range mat[i*dims : (i+1)*dims] {
			if val(x) > sg.Centre[j] {
				w[j/64] |= 1 << (j % 64)
			}
		}
	}
	return sg
}

// Quantized-section layout of a "TSSNAP07" or later file, after the matrix (which
// starts at a multiple of 64 bytes): dims float32 centres, 0 to 7 zero
// bytes so that the bits start at a multiple of 8, rows × words uint64
// sign bits; nothing at all when there are no rows. QuantLayout returns
// the section's padding and length in bytes, ok false when it would not
// fit in an int64.
func QuantLayout(rows, dims int) (pad, total uint64, ok bool) {
	return quantLayout(rows, dims, 2)
}

// quantLayout is QuantLayout after a matrix of elem bytes a value: 2 in
// this format, 4 in "TSSNAP06" (0 or 4 bytes of padding there).
func quantLayout(rows, dims int, elem uint64) (pad, total uint64, ok bool) {
	if rows == 0 {
		return 0, 0, true // no rows, no centres: the section is empty
	}
	words := uint64(dims+63) / 64
	pad = (8 - (elem*uint64(rows)*uint64(dims)+4*uint64(dims))%8) % 8
	hi, lo := bits.Mul64(uint64(rows), 8*words)
	if hi != 0 || lo > math.MaxInt64/2 {
		return 0, 0, false
	}
	return pad, 4*uint64(dims) + pad + lo, true
}
