//go:build !unix

package fileio

import (
	"os"
	"time"
)

// Lock creates path and returns at once: without flock, processes that
// share a data dir are not kept from interleaving their updates (the
// file each writes is still whole: WriteAtomic).
func Lock(path string, wait time.Duration) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
