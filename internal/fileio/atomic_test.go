package fileio

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFile: the file is written whole with the mode asked for, no
// temporary file is left, and a failed write leaves the old file as it
// was.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.md")
	if err := WriteFile(path, []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v; want 0644", fi.Mode().Perm(), err)
	}
	os.Chmod(dir, 0o555) // no new file can be made beside it
	defer os.Chmod(dir, 0o755)
	if os.Geteuid() != 0 { // root writes anyway
		if err := WriteFile(path, []byte("second"), 0o644); err == nil {
			t.Error("a write where no temporary file can be made succeeded")
		}
	}
	os.Chmod(dir, 0o755)
	if data, _ := os.ReadFile(path); string(data) != "first" {
		t.Errorf("after a failed write the file holds %q", data)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*"+TmpSuffix+"*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
