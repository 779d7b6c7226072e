//go:build !amd64

package vector

// quantRowsKernel: no kernel on this architecture, quantRows estimates
// in Go.
func quantRowsKernel(bs []uint64, words int, qw []uint64, est []uint16, hist []int32) bool {
	return false
}

// hasQuantKernel: none here.
const hasQuantKernel = false

// hasQuantAVX512: none here.
const hasQuantAVX512 = false

// quantRowsBy: no kernel here.
func quantRowsBy(avx512 bool, bs []uint64, words int, qw []uint64, est []uint16, hist []int32) bool {
	return false
}
