package vector

import (
	"github.com/toolscout/toolscout/index/vector/snapfile"
	"golang.org/x/sys/cpu"
)

// On amd64 a float16 row is scored eight values a step: VCVTPH2PS (F16C)
// converts them, VFMADD231PS multiplies and adds (dothalf_amd64.s), where
// the portable dotHalf does one value at a time (about 6x slower than
// gonum's float32 dot on this kind of machine; the kernel is as fast as
// gonum's, on half the bytes).

// cpuidF16C reports whether the CPU converts float16 (CPUID 1, ECX 29).
func cpuidF16C() bool

// dotHalfF16C is Σ q[j]·h[j] over n values, n a multiple of 8.
//
//go:noescape
func dotHalfF16C(q *float32, h *uint16, n int) float32

// prefetchHalf asks for the cache lines of the n values at h.
//
//go:noescape
func prefetchHalf(h *uint16, n int)

// hasF16C: the kernel runs where the OS keeps the AVX registers
// (x/sys/cpu checks XGETBV) and the CPU has FMA and F16C.
var hasF16C = cpu.X86.HasAVX && cpu.X86.HasFMA && cpuidF16C()

// halfKernel reports whether dotHalfKernel scores rows of n values.
func halfKernel(n int) bool { return hasF16C && n >= 8 }

// dotHalfKernel is the dot product of q with the float16 row h (as
// long), by the kernel, the values after the last multiple of 8 in Go.
func dotHalfKernel(q []float32, h []uint16) float32 {
	h = h[:len(q)]
	n := len(q) &^ 7
	s := dotHalfF16C(&q[0], &h[0], n)
	for j := n; j < len(q); j++ {
		s += q[j] * snapfile.HalfFloat(h[j])
	}
	return s
}
