package fileio

import (
	"sync"
	"syscall"
)

// OffHeap returns n zeroed bytes outside the Go heap (an anonymous
// private mapping), and release, which unmaps them: for one large
// buffer that lives a while and is then let go at a known point, such
// as a cold index's vector matrix. Bytes in the Go heap count twice
// towards its peak (the collector lets the heap grow to twice what is
// live before it runs, GOGC 100); these count once. Nothing may touch
// the bytes, or a slice of them, after release. When mapping fails it
// falls back to the heap (release then does nothing).
func OffHeap(n int) (data []byte, release func()) {
	if n <= 0 {
		return []byte{}, func() {}
	}
	data, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n), func() {}
	}
	var once sync.Once
	return data, func() { once.Do(func() { syscall.Munmap(data) }) }
}
