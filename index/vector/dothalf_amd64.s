#include "textflag.h"

// func cpuidF16C() bool
// CPUID leaf 1: ECX bit 29 is F16C (VCVTPH2PS).
TEXT ·cpuidF16C(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	SHRL $29, CX
	ANDL $1, CX
	MOVB CX, ret+0(FP)
	RET

// func dotHalfF16C(q *float32, h *uint16, n int) float32
// n is a multiple of 8: Σ q[j]·float32(h[j]), eight values a step
// converted by VCVTPH2PS and summed by VFMADD231PS in two accumulators.
TEXT ·dotHalfF16C(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), SI
	MOVQ h+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

loop16:
	CMPQ CX, $16
	JL   tail8
	VCVTPH2PS (DI), Y2
	VCVTPH2PS 16(DI), Y3
	VFMADD231PS (SI), Y2, Y0
	VFMADD231PS 32(SI), Y3, Y1
	ADDQ $32, DI
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  loop16

tail8:
	CMPQ CX, $8
	JL   done
	VCVTPH2PS (DI), Y2
	VFMADD231PS (SI), Y2, Y0

done:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func prefetchHalf(h *uint16, n int)
// Asks for the cache lines of the n float16 values at h (PREFETCHT0), n
// at least 1.
TEXT ·prefetchHalf(SB), NOSPLIT, $0-16
	MOVQ h+0(FP), DI
	MOVQ n+8(FP), CX
	LEAQ -1(DI)(CX*2), CX // the last byte
	ANDQ $-64, CX

line:
	PREFETCHT0 (DI)
	ADDQ       $64, DI
	CMPQ       DI, CX
	JLE        line
	PREFETCHT0 (CX)
	RET
