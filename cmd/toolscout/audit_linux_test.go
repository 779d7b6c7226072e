package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// auditFullDiskEnv names the trail a child process of
// TestAuditFileFullDisk writes under a file size limit.
const auditFullDiskEnv = "TOOLSCOUT_TEST_AUDIT_FULL_DISK"

// TestAuditFileFullDisk: a write the kernel cuts short (here at
// RLIMIT_FSIZE, as at a full disk: part of the line lands, then the
// write fails) is taken back, so that when there is room again the
// trail holds whole lines only (issue 52, item 5: the next record was
// glued to the fragment, one line that was not JSON). The limit is set
// in a child process of this test binary: it applies to every file the
// process writes.
func TestAuditFileFullDisk(t *testing.T) {
	line := func(i int) []byte { return fmt.Appendf(nil, `{"i":%d,"pad":%q}`+"\n", i, strings.Repeat("p", 680)) }
	if path := os.Getenv(auditFullDiskEnv); path != "" {
		// The child: room for two lines and part of a third.
		var limit syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
			t.Fatal(err)
		}
		af, err := newAuditFile(path)
		if err != nil {
			t.Fatal(err)
		}
		defer af.Close()
		small := syscall.Rlimit{Cur: uint64(2*len(line(0)) + 300), Max: limit.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &small); err != nil {
			t.Skipf("cannot limit the file size: %v", err)
		}
		for i := range 3 {
			n, err := af.Write(line(i))
			if want := len(line(i)); i < 2 && (n != want || err != nil) || i == 2 && (n != 0 || err == nil) {
				t.Errorf("line %d: Write = %d, %v; want %d, nil for the first two, 0 and an error for the third", i, n, err, want)
			}
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
			t.Fatal(err)
		}
		if _, err := af.Write(line(3)); err != nil { // room again
			t.Errorf("line 3: %v", err)
		}
		return
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestAuditFileFullDisk$", "-test.v")
	cmd.Env = append(os.Environ(), auditFullDiskEnv+"="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "SKIP") {
		t.Skipf("the child skipped:\n%s", out)
	}
	data, _ := os.ReadFile(path)
	var got []float64
	for l := range strings.Lines(string(data)) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || !strings.HasSuffix(l, "\n") {
			t.Fatalf("the trail holds a line that is not a whole JSON object (%v): %.120q\n%s", err, l, data)
		}
		got = append(got, m["i"].(float64))
	}
	if fmt.Sprint(got) != "[0 1 3]" {
		t.Errorf("the trail holds lines %v, want [0 1 3] (2 cut short by the limit, taken back)", got)
	}
}
