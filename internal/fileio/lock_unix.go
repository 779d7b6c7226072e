//go:build unix

package fileio

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Lock takes an exclusive advisory lock (flock) on path, creating it,
// waiting at most wait for another process to release it. The returned
// func releases it. A kill releases it too: the lock dies with its
// holder's file descriptor.
func Lock(path string, wait time.Duration) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: another toolscout process held it for %s: %w", path, wait, ErrLocked)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
