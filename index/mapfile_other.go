//go:build !linux

package index

import "os"

// readOnlyFile returns path's bytes, which callers must not write (on
// Linux they are the file, mapped read-only).
func readOnlyFile(path string) ([]byte, error) { return os.ReadFile(path) }
