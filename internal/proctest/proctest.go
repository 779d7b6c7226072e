// Package proctest finds, for tests, the processes that a test's upstream
// servers started, through Linux's /proc: each is marked with an
// environment variable that every process it starts inherits, so that
// grandchildren reparented to init are found too.
//
//	mark := proctest.NewMark()
//	cfg := gateway.UpstreamConfig{Command: "npx", Env: map[string]string{proctest.Env: mark}}
//	// ... run, then close
//	if left := proctest.WaitGone(mark, 3*time.Second); len(left) > 0 { ... }
package proctest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Env names the variable that marks a test's processes.
const Env = "TOOLSCOUT_TEST_MARK"

// Supported reports whether processes can be found here (Linux /proc).
func Supported() bool {
	if runtime.GOOS != "linux" {
		return false
	}
	_, err := os.Stat("/proc/self/environ")
	return err == nil
}

// NewMark returns a mark no other test uses.
func NewMark() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Proc is one process.
type Proc struct {
	PID, PGID int
	State     string // as /proc/PID/stat says: R, S, Z, ...
	Cmdline   string
}

func (p Proc) String() string {
	return fmt.Sprintf("%d (group %d, %s) %s", p.PID, p.PGID, p.State, p.Cmdline)
}

// Stat returns process pid, or ok false when it is gone.
func Stat(pid int) (p Proc, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return Proc{}, false
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces and ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 3 {
		return Proc{}, false
	}
	pgid, _ := strconv.Atoi(f[2])
	cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	cmd = bytes.TrimRight(cmd, "\x00")
	return Proc{PID: pid, PGID: pgid, State: f[0], Cmdline: string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))}, true
}

// Marked returns the live processes (zombies left out) whose environment
// holds Env=mark.
func Marked(mark string) ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	want := []byte(Env + "=" + mark + "\x00")
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.HasPrefix(env, want) && !bytes.Contains(env, append([]byte{0}, want...)) {
			continue
		}
		if p, ok := Stat(pid); ok && p.State != "Z" {
			out = append(out, p)
		}
	}
	return out, nil
}

// WaitGone waits up to within for the processes marked with mark to be
// gone; it returns those left, after killing them so that a failing test
// leaves nothing behind.
func WaitGone(mark string, within time.Duration) ([]Proc, error) {
	deadline := time.Now().Add(within)
	for {
		left, err := Marked(mark)
		if err != nil || len(left) == 0 {
			return nil, err
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				if q, err := os.FindProcess(p.PID); err == nil {
					q.Kill()
				}
			}
			return left, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SetParallel sets go test's -parallel to n unless the command line set
// it, for a test package whose parallel tests spend their time waiting
// for the processes they start (upstream servers, toolscout itself)
// rather than on the CPU: go test's default, GOMAXPROCS, leaves a 2-core
// machine mostly idle while they wait. Call it in TestMain, before
// m.Run.
func SetParallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}
