package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolscout/toolscout/internal/proctest"
	"github.com/toolscout/toolscout/server/codemode"
)

// parallelWaiting is how many of the package's parallel tests run at
// once unless -parallel says otherwise: most of them wait for the
// processes they start (toolscout, the npm reference servers, node
// clients), the CPU mostly idle.
const parallelWaiting = 4

// The tests that run toolscout as a process share one binary, built
// when the first of them asks for it (a run that needs none builds none)
// and removed when the package's tests end.
var binary struct {
	once sync.Once
	dir  string // the folder it is built in
	path string
	err  error
}

func TestMain(m *testing.M) {
	codemode.ChildMain() // code mode's sandbox, started by in-process commands
	if file := os.Getenv(pinServerEnv); file != "" {
		pinServer(file)
		os.Exit(0)
	}
	proctest.SetParallel(parallelWaiting)
	code := m.Run()
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
	if builtinEval.dir != "" {
		os.RemoveAll(builtinEval.dir)
	}
	os.Exit(code)
}

// buildBinary returns the toolscout binary of this run, building it the
// first time (go build, which leaves a seed from seedFromMake as it is
// when it is what the build would link). A test that may skip does so
// before it calls buildBinary.
func buildBinary(t testing.TB) string {
	t.Helper()
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "toolscout-test-")
		if err != nil {
			binary.err = err
			return
		}
		binary.dir = dir
		bin := filepath.Join(dir, "toolscout")
		seedFromMake(bin)
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		binary.path = bin
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// seedFromMake copies the repository's bin/toolscout, which make's build
// target links before `make test` runs the unit tests, to bin: go build
// -o bin then finds a binary whose build ID is the one it would link and
// leaves it (0.4 CPU s against 3 for the link, and the 10 to 15 s of
// wall a loaded machine took for it, which the first test to start
// toolscout waited for). A missing, stale or otherwise built
// bin/toolscout is linked over as before. A copy, not a link: the
// original keeps serving make's other phases meanwhile.
func seedFromMake(bin string) {
	src, err := os.Open(filepath.Join("..", "..", "bin", "toolscout"))
	if err != nil {
		return
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err != nil || cerr != nil {
		os.Remove(bin)
	}
}

// runBinary runs the built toolscout with args and env added to the
// environment, and returns its stdout, stderr and exit status: for a
// test whose command needs an environment of its own (t.Setenv would
// keep the test serial: the environment is the process's).
func runBinary(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd := exec.Command(buildBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code == 0 {
		t.Fatalf("toolscout %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}
