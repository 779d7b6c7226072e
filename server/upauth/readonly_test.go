//go:build unix

package upauth

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolscout/toolscout/internal/logtest"
)

// TestSourceReadOnlyDataDir: where the data dir cannot be written (a
// replica's), the sign-in is still read, a refresh still serves the
// call with its new token, held in memory (not refreshed again on each
// call, its rotated refresh token used next time), the log says once
// why it is not saved and quotes no token, and a new sign-in written to
// the file is used at once.
func TestSourceReadOnlyDataDir(t *testing.T) {
	if os.Getuid() == 0 {
		// root writes anywhere: run this test again as nobody.
		runAsNobody(t, "TestSourceReadOnlyDataDir")
		return
	}
	te := newTokenEndpoint(t, "refresh-0-secret")
	st := signedIn(t, te, time.Now().Add(-time.Minute)) // expired: the first call refreshes
	dir := filepath.Dir(st.Path())
	os.Remove(st.Path() + ".lock")
	readOnly := func() {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	readOnly()
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	var logs logtest.Buffer
	src := NewSource(st, "remote", "https://remote.example/mcp", nil, nil).WithLog(slog.New(slog.NewTextHandler(&logs, nil)))

	for i := range 3 {
		got, err := src.Token(t.Context())
		if err != nil || got != "access-1-secret" {
			t.Fatalf("Token #%d with a read-only data dir = %q, %v; want access-1-secret", i, got, err)
		}
	}
	if n := te.hits.Load(); n != 1 {
		t.Errorf("token endpoint hit %d times for 3 calls, want 1: the refreshed token is held", n)
	}
	// The upstream refuses it: refreshed again with the rotated refresh
	// token held in memory (the file's is spent).
	got, err := src.Refresh(t.Context(), "access-1-secret")
	if err != nil || got != "access-2-secret" {
		t.Fatalf("Refresh of the held token = %q, %v; want access-2-secret", got, err)
	}
	if e, err := st.Get("remote"); err != nil || e.AccessToken != "access-0-secret" {
		t.Errorf("the file's entry = %+v, %v; want it as it was (access-0-secret)", e, err)
	}
	out := logs.String()
	if n := strings.Count(out, "cannot be saved"); n != 1 {
		t.Errorf("the log says %d times that the token cannot be saved, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "read-only") || !strings.Contains(out, "server=remote") || !strings.Contains(out, dir) {
		t.Errorf("the log does not say which server, why and where:\n%s", out)
	}
	if strings.Contains(out, "secret") {
		t.Errorf("the log holds a token:\n%s", out)
	}

	// A new sign-in, written where the data dir is writable, is used at once.
	os.Chmod(dir, 0o755)
	e, _ := st.Get("remote")
	e.AccessToken, e.Expiry = "access-new-secret", time.Now().Add(time.Hour)
	if err := st.Put("remote", e); err != nil {
		t.Fatal(err)
	}
	os.Remove(st.Path() + ".lock")
	readOnly()
	if got, err := src.Token(t.Context()); err != nil || got != "access-new-secret" {
		t.Errorf("Token after a new sign-in = %q, %v; want access-new-secret", got, err)
	}
}

// runAsNobody runs the test named again in a copy of the test binary
// as uid and gid 65534, for what root cannot see (a directory it may
// not write).
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "upauth-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "upauth.test")
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	outf, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(outf, in); err != nil {
		t.Fatal(err)
	}
	outf.Close()
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR=/tmp", "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as nobody: %v\n%s", name, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s as nobody did not pass:\n%s", name, out)
	}
}
