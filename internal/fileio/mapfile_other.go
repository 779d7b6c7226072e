//go:build !linux

package fileio

import "os"

// ReadMapped returns path's bytes, which callers must not write (on
// Linux they are the file, mapped read-only).
func ReadMapped(path string) ([]byte, error) { return os.ReadFile(path) }

// ReadMappedReleasable is ReadMapped for bytes needed only for a while;
// release does nothing here (the GC takes them once unreferenced).
func ReadMappedReleasable(path string) (data []byte, release func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}

// OffHeap returns n zeroed bytes; on Linux they are outside the Go heap
// (an anonymous mapping) and release unmaps them; here they are the
// heap's, and release does nothing.
func OffHeap(n int) (data []byte, release func()) {
	return make([]byte, max(n, 0)), func() {}
}

// ReadMappedDroppable is ReadMapped with drop, which on Linux lets go of
// the resident pages of data[from:to]; here it does nothing.
func ReadMappedDroppable(path string) (data []byte, drop func(from, to int), err error) {
	data, err = os.ReadFile(path)
	return data, func(int, int) {}, err
}
