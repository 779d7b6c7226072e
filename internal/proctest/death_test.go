package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const helperEnv = "TOOLSCOUT_PROCTEST_HELPER"

// TestMain: with helperEnv set, this binary is a parent that starts
// `sleep 300` with DieWithParent, prints its pid and exits.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		cmd := exec.Command("sleep", "300")
		DieWithParent(cmd)
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestDieWithParent: a process started with DieWithParent ends when the
// process that started it exits without stopping it.
func TestDieWithParent(t *testing.T) {
	if !Supported() {
		t.Skip("no /proc here")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe, "-test.run=^$")
	parent.Env = append(os.Environ(), helperEnv+"=1")
	out, err := parent.Output()
	if err != nil {
		t.Fatalf("the parent: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the parent printed %q, not a pid", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, ok := Stat(pid)
		if !ok || p.State == "Z" {
			return
		}
		if time.Now().After(deadline) {
			exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
			t.Fatalf("the child %s outlived its parent by 10 s", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
