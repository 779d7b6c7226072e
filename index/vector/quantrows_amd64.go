package vector

import "golang.org/x/sys/cpu"

// On amd64 the quantized pass estimates a row in assembly
// (quantrows_amd64.s): per 64 dimensions one XOR with the query's signs,
// then for each of the three bit planes an ANDN (BMI1) and a POPCNT. The
// same loop in Go checks runtime.x86HasPOPCNT before each of the three
// popcounts (GOAMD64=v1, the default) and loads the query from four
// columns; measured at 1M rows of 640 dimensions:
// docs/benchmarks/2026-12-06-1m-semantic.md.

// quantRowsAsm writes est[i] = 1 + the estimate of row i of the n rows of
// words uint64 at bs (quant.go) and counts hist[est[i]]++. qw holds the
// query's four words for each of the row's (quantCols).
//
//go:noescape
func quantRowsAsm(bs *uint64, words, n int, qw *uint64, est *uint16, hist *int32)

// quantRowsAVX512 is quantRowsAsm by AVX-512 for rows of up to 16
// words, qv the query's signs and planes 16 words each (quantRowsKernel),
// maskA and maskB the row's words in the first and second 8.
//
//go:noescape
func quantRowsAVX512(bs *uint64, words, n int, qv *uint64, est *uint16, hist *int32, maskA, maskB uint64)

// hasQuantKernel: the CPU has POPCNT and BMI1's ANDN.
var hasQuantKernel = cpu.X86.HasPOPCNT && cpu.X86.HasBMI1

// hasQuantAVX512: and VPOPCNTQ, where the OS keeps the AVX-512 state
// (x/sys/cpu checks XGETBV).
var hasQuantAVX512 = hasQuantKernel && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPOPCNTDQ

// quantRowsKernel is quantRows by the kernel where the CPU has it: the
// AVX-512 one for rows of up to 16 words (1,024 dimensions) where it
// runs.
func quantRowsKernel(bs []uint64, words int, qw []uint64, est []uint16, hist []int32) bool {
	return quantRowsBy(hasQuantAVX512, bs, words, qw, est, hist)
}

// quantRowsBy is quantRowsKernel, by AVX-512 when avx512 is set.
func quantRowsBy(avx512 bool, bs []uint64, words int, qw []uint64, est []uint16, hist []int32) bool {
	if !hasQuantKernel || len(est) == 0 || words < 1 {
		return false
	}
	n := len(est)
	_ = bs[n*words-1] // the rows are there
	_ = qw[4*words-1] // and the query's words
	if avx512 && hasQuantAVX512 && words <= 16 {
		var qv [64]uint64
		for j := range words {
			for l := range 4 {
				qv[16*l+j] = qw[4*j+l]
			}
		}
		quantRowsAVX512(&bs[0], words, n, &qv[0], &est[0], &hist[0], 1<<min(words, 8)-1, 1<<max(words-8, 0)-1)
		return true
	}
	quantRowsAsm(&bs[0], words, n, &qw[0], &est[0], &hist[0])
	return true
}
