package server

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// childTestEnv names the top-level test that a child process of the test
// binary runs (inOwnProcess).
const childTestEnv = "TOOLSCOUT_TEST_CHILD"

// childLimit bounds a child's run (runChild), shorter when the test
// binary's own -timeout ends sooner.
const childLimit = 5 * time.Minute

// inOwnProcess runs the calling test in a child process of the test
// binary, alone there, so that what the test measures of its process
// (the live heap, the goroutines, testing.AllocsPerRun, process-wide
// counters such as relay.HTTPStats, the environment, a package variable)
// is its own while the test runs in parallel with the package's others
// (issue 47: such tests ran serially, before every parallel one). A
// subtest may call it, each case then in a process of its own; its
// parent test then calls t.Parallel() too, or the package's serial tests
// wait for the cases.
//
// In the parent it marks the test parallel, runs the child (runChild),
// relays the child's output into the test's log, fails the test with it
// when the child fails, hangs past its limit or runs no test, skips the
// test when the child skipped it, and returns false: the caller returns.
// In the child it returns true: the caller runs its body.
//
//	func TestHeapIsReleased(t *testing.T) {
//		if !inOwnProcess(t) {
//			return
//		}
//		before := heapNow()
//		...
//	}
func inOwnProcess(t *testing.T) bool {
	t.Helper()
	name := t.Name()
	if os.Getenv(childTestEnv) == name {
		return true
	}
	t.Parallel()
	limit := childLimit
	if d, ok := t.Deadline(); ok {
		limit = max(min(limit, time.Until(d)-10*time.Second), time.Second)
	}
	r := runChild(name, limit)
	switch r.outcome {
	case childPassed:
		t.Logf("the child process ran %s:\n%s", name, r.log)
	case childSkipped:
		t.Skipf("the child process skipped %s:\n%s", name, r.log)
	default:
		t.Fatalf("the child process running %s %s:\n%s", name, r.outcome, r.log)
	}
	return false
}

// childResult is how a child process's run of a test ended, and its
// output.
type childResult struct {
	outcome string // one of the child* constants
	log     string
}

// The outcomes of a child's run.
const (
	childPassed  = "passed"
	childSkipped = "skipped"
	childFailed  = "failed"
	childHung    = "did not end within its limit"
	childRanNone = "ran no such test"
)

// runChild runs the test name (a subtest's full name) in a child process of the test
// binary, with limit as its -test.timeout (past it the child panics with
// every goroutine's stack) and killed a little after it,
// and extra added to its environment. The child gets -test.run naming
// the test, -test.v (its log), -test.short, -test.parallel and the
// package's own flags as the parent has them, GOMAXPROCS as the test has
// it (-cpu), and -race when the binary has it (the child is the same
// binary); profiles, -json framing, -bench and -fuzz stay the parent's.
func runChild(name string, limit time.Duration, extra ...string) childResult {
	ctx, cancel := context.WithTimeout(context.Background(), limit+10*time.Second)
	defer cancel()
	// -test.run matches each level of a subtest's name on its own.
	levels := strings.Split(name, "/")
	for i, l := range levels {
		levels[i] = "^" + regexp.QuoteMeta(l) + "$"
	}
	args := []string{"-test.run=" + strings.Join(levels, "/"), "-test.count=1", "-test.v=true", "-test.timeout=" + limit.String()}
	keep := map[string]bool{"test.short": true, "test.parallel": true, "test.fullpath": true, "test.paniconexit0": true}
	flag.Visit(func(f *flag.Flag) {
		if keep[f.Name] || !strings.HasPrefix(f.Name, "test.") {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), childTestEnv+"="+name, "GOMAXPROCS="+strconv.Itoa(runtime.GOMAXPROCS(0)))
	cmd.Env = append(cmd.Env, extra...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The child's own processes (fake upstreams) may hold its output
	// open after it is killed.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	r := childResult{log: strings.TrimSuffix(out.String(), "\n")}
	switch {
	case ctx.Err() != nil || strings.Contains(r.log, "panic: test timed out after "):
		r.outcome = childHung
	case err != nil:
		r.outcome = childFailed
	case strings.Contains(r.log, "--- SKIP: "+name+" ("):
		r.outcome = childSkipped
	case strings.Contains(r.log, "--- PASS: "+name+" ("):
		r.outcome = childPassed
	default:
		r.outcome = childRanNone
	}
	return r
}

// childDoEnv tells TestOwnProcessFixture what to do.
const childDoEnv = "TOOLSCOUT_TEST_CHILD_DO"

// TestOwnProcessFixture is the test TestRunChild runs in child processes:
// it logs the flags it sees and passes, fails, skips, hangs or races as
// childDoEnv says; its subtest logs that it ran. Run any other way it
// skips.
func TestOwnProcessFixture(t *testing.T) {
	if !strings.HasPrefix(os.Getenv(childTestEnv), t.Name()) {
		t.Skip("TestRunChild runs it in child processes")
	}
	t.Run("a case/of it", func(t *testing.T) { t.Logf("%s ran", t.Name()) })
	t.Logf("short=%v GOMAXPROCS=%d", testing.Short(), runtime.GOMAXPROCS(0))
	switch os.Getenv(childDoEnv) {
	case "fail":
		t.Error("failed on purpose")
	case "skip":
		t.Skip("skipped on purpose")
	case "hang":
		time.Sleep(time.Hour)
	case "race":
		n, done := 0, make(chan bool)
		go func() { n++; close(done) }()
		n++
		<-done
	}
}

// TestRunChild: a child process's pass, failure, skip, hang and data race
// come back to the parent with the child's log, the flags the parent runs
// with reach the child, a subtest runs by its full name, and a name no
// test has is no pass.
func TestRunChild(t *testing.T) {
	t.Parallel()
	race := childPassed
	if raceBuild {
		race = childFailed
	}
	for _, c := range []struct {
		name, do string
		limit    time.Duration
		outcome  string
		logs     string // in the child's log
	}{
		{"pass", "", time.Minute, childPassed, fmt.Sprintf("short=%v GOMAXPROCS=%d", testing.Short(), runtime.GOMAXPROCS(0))},
		{"fail", "fail", time.Minute, childFailed, "failed on purpose"},
		{"skip", "skip", time.Minute, childSkipped, "skipped on purpose"},
		{"hang", "hang", 2 * time.Second, childHung, "goroutine"},
		{"race", "race", time.Minute, race, map[bool]string{true: "WARNING: DATA RACE", false: "--- PASS"}[raceBuild]},
		{"subtest", "", time.Minute, childPassed, "TestOwnProcessFixture/a_case/of_it ran"},
		{"none", "", time.Minute, childRanNone, "no tests to run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			name := map[string]string{"none": "TestNoSuchTest", "subtest": "TestOwnProcessFixture/a_case/of_it"}[c.name]
			if name == "" {
				name = "TestOwnProcessFixture"
			}
			start := time.Now()
			r := runChild(name, c.limit, childDoEnv+"="+c.do)
			if r.outcome != c.outcome || !strings.Contains(r.log, c.logs) {
				t.Errorf("runChild(%s, %s) = %s, want %s with %q in its log:\n%s", name, c.do, r.outcome, c.outcome, c.logs, r.log)
			}
			if took := time.Since(start); took > c.limit+5*time.Second {
				t.Errorf("runChild(%s, %s) took %s, limit %s", name, c.do, took, c.limit)
			}
		})
	}
}
