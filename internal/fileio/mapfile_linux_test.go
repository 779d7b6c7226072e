package fileio

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
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

// mappedRss returns the resident kB of this process's mapping of path.
func mappedRss(t *testing.T, path string) int {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	in, kb := false, 0
	for _, line := range strings.Split(string(smaps), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && len(f) >= 5 {
			in = strings.HasSuffix(line, path)
			continue
		}
		if rest, ok := strings.CutPrefix(line, "Rss:"); ok && in {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("smaps Rss line %q: %v", line, err)
			}
			kb += n
		}
	}
	return kb
}

// TestReadMappedDroppable: drop lets go of the resident pages inside
// the range (not the partial ones at its ends), and the bytes still read
// as the file's.
func TestReadMappedDroppable(t *testing.T) {
	page := os.Getpagesize()
	path := filepath.Join(t.TempDir(), "catalog.bin")
	want := []byte(strings.Repeat("0123456789abcdef", 64*page/16))
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	data, drop, err := ReadMappedDroppable(path)
	if err != nil || !bytes.Equal(data, want) {
		t.Fatalf("ReadMappedDroppable = %d bytes, %v; want the file's %d", len(data), err, len(want))
	}
	if got := mappedRss(t, path); got != 64*page/1024 {
		t.Fatalf("mapping resident %d kB after reading it all, want %d", got, 64*page/1024)
	}
	drop(4*page-1, 60*page+1) // pages 4 to 59
	if got, want := mappedRss(t, path), 8*page/1024; got != want {
		t.Errorf("mapping resident %d kB after dropping 56 of 64 pages, want %d", got, want)
	}
	if !bytes.Equal(data, want) {
		t.Error("the bytes changed after drop")
	}
}
