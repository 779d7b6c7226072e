package fileio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mappedNow reports whether this process maps path now.
func mappedNow(t *testing.T, path string) bool {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps:", err)
	}
	return strings.Contains(string(maps), path)
}

// TestReadMappedReleasable: the bytes are the file's, mapped, and after
// release (twice: the second does nothing) the file is mapped no more.
func TestReadMappedReleasable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.json")
	want := strings.Repeat(`{"tools": []}`, 1000)
	if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	data, release, err := ReadMappedReleasable(path)
	if err != nil || string(data) != want {
		t.Fatalf("ReadMappedReleasable = %d bytes, %v; want the file's %d", len(data), err, len(want))
	}
	if !mappedNow(t, path) {
		t.Fatal("the file is not mapped before release")
	}
	release()
	release()
	if mappedNow(t, path) {
		t.Error("the file is still mapped after release")
	}
	// An empty file is not mapped; its release does nothing.
	empty := filepath.Join(t.TempDir(), "empty.json")
	os.WriteFile(empty, nil, 0o644)
	if data, release, err = ReadMappedReleasable(empty); err != nil || len(data) != 0 {
		t.Fatalf("empty file: %d bytes, %v", len(data), err)
	}
	release()
}
