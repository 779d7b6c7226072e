package vector

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/toolscout/toolscout/internal/racetest"
	"github.com/toolscout/toolscout/internal/synth"
)

// TestColdSyncMatrixNotResident: a cold sync into a directory never has
// its matrix in the process's memory: the rows go to a file as they are
// embedded and the snapshot is written from it. The peak resident memory
// of the sync (the kernel's high-water mark, reset before it) grows by
// less than half the float32 matrix. Before, the matrix was an anonymous
// mapping that every row was written into: at 100k tools 256 MB of the
// cold index's peak RSS, at 1M 2.56 GB.
func TestColdSyncMatrixNotResident(t *testing.T) {
	racetest.Plain(t)
	// Writing 5 resets the process's VmHWM (Linux 4.0 and later).
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak resident memory: %v", err)
	}
	cat, err := synth.Catalog(4000, 9)
	if err != nil {
		t.Fatal(err)
	}
	const dims = 4096
	col := Collection{Provider: "test", Model: "random", Dims: dims}
	matrix := int64(len(cat.Tools())) * dims * 4
	vs, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The heap's own growth (the embedder's vectors are garbage a
	// batch later) kept small beside the matrix: the collector runs
	// when the heap is a tenth over what is live, not twice it.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
	before := procStatusKB(t, "VmRSS")
	if _, err := vs.Sync(context.Background(), col, cat, plainRandom{dims}, SyncOptions{BatchSize: 100}); err != nil {
		t.Fatal(err)
	}
	peak := procStatusKB(t, "VmHWM")
	if grew := (peak - before) << 10; grew > matrix/2 {
		t.Errorf("a cold sync of %d tools raised the peak RSS by %d MB, its float32 matrix is %d MB: want less than half of it resident", len(cat.Tools()), grew>>20, matrix>>20)
	}
	s, err := vs.snapshot(context.Background(), col)
	if err != nil || s == nil || s.count() != len(cat.Tools()) {
		t.Fatalf("snapshot read back after the sync: %v, %v", s, err)
	}
	if left, _ := os.ReadDir(vs.dir); len(left) != 1 {
		t.Errorf("after the sync the directory holds %d files, want the collection's alone", len(left))
	}
	runtime.KeepAlive(vs)
}

// procStatusKB returns field's value in /proc/self/status, in kB.
func procStatusKB(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(l); len(f) >= 2 && string(f[0]) == field+":" {
			n, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
