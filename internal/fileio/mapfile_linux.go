package fileio

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// ReadMapped returns path's bytes mapped read-only, for the life of the
// process: what a start reads whole (the catalog cache, vector
// snapshots) costs a page-table update instead of a copy into fresh heap
// memory (on a VM, faulting in 60 MB of new memory took 180 ms; mapping
// the same file from the page cache, 1 ms). The bytes must never be
// written: they are the file. Files are replaced by rename
// (WriteAtomic), never rewritten in place, so a mapping always sees
// the file it opened. When mapping fails it falls back to reading.
func ReadMapped(path string) ([]byte, error) {
	data, _, err := readMapped(path)
	return data, err
}

// ReadMappedReleasable is ReadMapped for bytes needed only for a while:
// release unmaps them (when they were mapped; bytes read instead are
// left to the GC). Nothing may touch data, or a string or slice made
// from it without a copy, after release: those addresses are gone.
func ReadMappedReleasable(path string) (data []byte, release func(), err error) {
	data, isMapped, err := readMapped(path)
	if !isMapped {
		return data, func() {}, err
	}
	var once sync.Once
	return data, func() { once.Do(func() { syscall.Munmap(data) }) }, nil
}

// ReadMappedDroppable is ReadMapped with drop, which lets go of the
// process's resident pages of data[from:to] (the whole pages inside
// it): a part of a file read once at start (checked) and seldom after,
// such as the catalog cache's schemas, which only a tool's schema asks
// for. The bytes stay the file's; a page touched again is read back from
// the page cache (or the file). Bytes read instead of mapped are kept:
// drop does nothing then.
func ReadMappedDroppable(path string) (data []byte, drop func(from, to int), err error) {
	data, isMapped, err := readMapped(path)
	if !isMapped {
		return data, func(int, int) {}, err
	}
	return data, func(from, to int) {
		page := os.Getpagesize() // a mapping starts on a page
		from = (max(from, 0) + page - 1) / page * page
		to = min(to, len(data)) / page * page
		if from < to {
			syscall.Madvise(data[from:to], syscall.MADV_DONTNEED)
		}
	}, nil
}

// readMapped is ReadMapped, saying whether it mapped the file.
func readMapped(path string) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	size := st.Size()
	if size == 0 {
		return []byte{}, false, nil
	}
	if size != int64(int(size)) {
		return nil, false, fmt.Errorf("%s: %d bytes is too large to map", path, size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		data, err = os.ReadFile(path)
		return data, false, err
	}
	return data, true, nil
}
