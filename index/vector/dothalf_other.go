//go:build !amd64

package vector

// halfKernel: no kernel on this architecture, dotHalf scores.
func halfKernel(n int) bool { return false }

// dotHalfKernel is never called here (halfKernel).
func dotHalfKernel(q []float32, h []uint16) float32 { panic("vector: no float16 kernel") }

// prefetchHalf is never called here (halfKernel).
func prefetchHalf(h *uint16, n int) { panic("vector: no float16 kernel") }
