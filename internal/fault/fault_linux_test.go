package fault

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestBoundedTurnsAFaultIntoAnError: reading a mapped page past the end
// of its file (what bbolt does in a root.bolt cut short) raises SIGBUS,
// which kills a Go program whatever recovers; inside Bounded it is an
// error wrapping ErrDamaged.
func TestBoundedTurnsAFaultIntoAnError(t *testing.T) {
	page := os.Getpagesize()
	path := filepath.Join(t.TempDir(), "cut")
	if err := os.WriteFile(path, make([]byte, 4*page), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := syscall.Mmap(int(f.Fd()), 0, 4*page, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(data)
	if err := os.Truncate(path, int64(page)); err != nil {
		t.Fatal(err)
	}
	err = Bounded("read a cut file", time.Minute, nil, func() error {
		if data[3*page] != 0 { // past the end of the file now
			return errors.New("read a byte that is not there")
		}
		return nil
	})
	if !errors.Is(err, ErrDamaged) {
		t.Errorf("Bounded on a fault = %v, want ErrDamaged", err)
	}
}
