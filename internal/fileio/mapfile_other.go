//go:build !linux

package fileio

import "os"

// ReadMapped returns path's bytes, which callers must not write (on
// Linux they are the file, mapped read-only).
func ReadMapped(path string) ([]byte, error) { return os.ReadFile(path) }
