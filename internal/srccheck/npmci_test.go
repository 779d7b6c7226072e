package srccheck_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeNPM stands in for npm under .ci/npm-ci. Each `ci` counts an
// attempt in DIR/attempts and writes make's mark
// (node_modules/.package-lock.json) first, as a half-written install
// would leave it; then, by FAKE_NPM: "hang" starts a grandchild that
// sleeps (its pid in DIR/grandchild.N), as npm's nested install does,
// and waits on it; "hang-once" does so on the first attempt only and
// succeeds on the second; "fail" exits 3.
const fakeNPM = `#!/usr/bin/env bash
[ "$1" = ci ] || exit 9
dir=$3
n=$(( $(cat "$dir/attempts" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$dir/attempts"
mkdir -p "$dir/node_modules"
echo partial > "$dir/node_modules/.package-lock.json"
mode=$FAKE_NPM
[ "$mode" = hang-once ] && { [ "$n" = 1 ] && mode=hang || mode=ok; }
case $mode in
ok) echo installed > "$dir/node_modules/.package-lock.json"; exit 0 ;;
fail) echo "npm error ERESOLVE" >&2; exit 3 ;;
hang) sh -c 'echo $$ > "$0"; exec sleep 300' "$dir/grandchild.$n" & wait ;;
esac
`

// runNPMCI runs the repository's .ci/npm-ci on a fresh directory with
// the fake npm in mode, each attempt allowed limit seconds; it returns
// the directory, the exit code and stderr. A run that leaves a process
// holding its output open fails the test instead of hanging it.
func runNPMCI(t *testing.T, mode, limit string) (string, int, string) {
	t.Helper()
	dir := t.TempDir()
	npm := filepath.Join(dir, "npm")
	if err := os.WriteFile(npm, []byte(fakeNPM), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join("..", "..", ".ci", "npm-ci"), dir)
	cmd.Env = append(os.Environ(), "NPM="+npm, "FAKE_NPM="+mode, "NPM_CI_TIMEOUT="+limit)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil || errors.Is(err, exec.ErrWaitDelay) {
		t.Fatalf("npm-ci (%s) did not end: %v; stderr:\n%s", mode, err, stderr.String())
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return dir, code, stderr.String()
}

// wantRun fails t unless npm-ci exited with code after attempts tries
// of npm ci and its stderr holds each of says.
func wantRun(t *testing.T, dir string, code int, stderr string, wantCode, wantAttempts int, says ...string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, wantCode, stderr)
	}
	if n := attempts(t, dir); n != wantAttempts {
		t.Fatalf("%d attempts, want %d", n, wantAttempts)
	}
	for _, want := range says {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func attempts(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "attempts"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// assertGone fails t when the grandchild the fake npm started in
// attempt n is still running once npm-ci has returned.
func assertGone(t *testing.T, dir string, n int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "grandchild."+strconv.Itoa(n)))
	if err != nil {
		t.Fatalf("attempt %d started no grandchild: %v", n, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("attempt %d's grandchild (pid %d) outlived npm-ci", n, pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func markOf(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "node_modules", ".package-lock.json"))
	return strings.TrimSpace(string(b))
}

// TestNPMCIRetriesAStall: an npm ci that stalls (a nested install that
// never ends, as the pinned node package's preinstall once did in CI)
// is stopped with everything it started after NPM_CI_TIMEOUT and tried
// once more, and a second attempt that succeeds is a success.
func TestNPMCIRetriesAStall(t *testing.T) {
	t.Parallel()
	dir, code, stderr := runNPMCI(t, "hang-once", "1")
	wantRun(t, dir, code, stderr, 0, 2, "did not finish in 1s: stopped, trying once more")
	assertGone(t, dir, 1)
	if got := markOf(dir); got != "installed" {
		t.Errorf("mark %q, want the second attempt's", got)
	}
}

// TestNPMCIStallsTwice: two stalled attempts fail the run with what to
// check and how to allow longer, and leave no mark for make to trust.
func TestNPMCIStallsTwice(t *testing.T) {
	t.Parallel()
	dir, code, stderr := runNPMCI(t, "hang", "1")
	wantRun(t, dir, code, stderr, 1, 2, "did not finish in 1s twice", "npm config get registry", "NPM_CI_TIMEOUT=")
	assertGone(t, dir, 1)
	assertGone(t, dir, 2)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); !os.IsNotExist(err) {
		t.Errorf("make's mark left after a failed install (%v)", err)
	}
}

// TestNPMCIFailureNotRetried: npm's own failure is not a stall: its exit
// code and one attempt, and no mark.
func TestNPMCIFailureNotRetried(t *testing.T) {
	t.Parallel()
	dir, code, stderr := runNPMCI(t, "fail", "30")
	wantRun(t, dir, code, stderr, 3, 1, "failed (exit 3)")
	if got := markOf(dir); got != "" {
		t.Errorf("make's mark %q left after a failed install", got)
	}
}

// TestNPMCIBadTimeout: a timeout that is not a positive whole number of
// seconds is refused before npm runs, with the value named.
func TestNPMCIBadTimeout(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"0", "5m", "-1", "1.5"} {
		dir, code, stderr := runNPMCI(t, "ok", bad)
		if code != 2 || !strings.Contains(stderr, "'"+bad+"'") {
			t.Errorf("NPM_CI_TIMEOUT=%s: exit %d, stderr %q; want 2 naming the value", bad, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "attempts")); err == nil {
			t.Errorf("NPM_CI_TIMEOUT=%s: npm ran", bad)
		}
	}
}
