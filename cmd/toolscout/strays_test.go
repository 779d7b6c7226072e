package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/internal/proctest"
)

// TestConfigRunLeavesNoUpstream: a CLI run with --config stops the
// upstream servers it started, with all they started, before it returns:
// no process of an npx-started everything server is left 3 s later (it
// was for about 60 s, issue 36).
func TestConfigRunLeavesNoUpstream(t *testing.T) {
	if !proctest.Supported() {
		t.Skip("finds processes through /proc")
	}
	root, _ := filepath.Abs("../..")
	if _, err := os.Stat(filepath.Join(root, "node_modules", ".bin", "mcp-server-everything")); err != nil {
		needNode(t, "npm packages are missing: run `npm ci` (make test does)")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		needNode(t, "npx is not installed")
	}
	dir := t.TempDir()
	mark := proctest.NewMark()
	cfg := filepath.Join(dir, "config.json")
	// --no-install: npx finds the server in the repository's node_modules.
	os.WriteFile(cfg, []byte(`{"mcpServers": {"everything": {"command": "`+npx+`", "args": ["--no-install", "mcp-server-everything"],
	  "cwd": "`+root+`", "env": {"`+proctest.Env+`": "`+mark+`"}}}}`), 0o644)
	stdout, stderr, code := runCLI(t, "search", "--config", cfg, "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin", "--limit", "3", "add two numbers")
	if code != 0 || !strings.Contains(stdout, "everything__get-sum") {
		t.Fatalf("search --config: exit %d\n%s%s", code, stdout, stderr)
	}
	left, err := proctest.WaitGone(mark, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("3 s after search --config returned, its upstream still runs as %v", left)
	}
}

// TestKilledServeLeavesNoUpstream: a `serve --config` killed with SIGKILL
// (it closes nothing) takes its stdio upstream servers with it, also one
// that does not end when its stdin closes (here `sleep`, a server still
// starting or hung): it used to be left running for good, one more at
// each kill.
func TestKilledServeLeavesNoUpstream(t *testing.T) {
	if !proctest.Supported() {
		t.Skip("finds processes through /proc")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	dir := t.TempDir()
	mark := proctest.NewMark()
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {"hung": {"command": "`+sleep+`", "args": ["600"], "env": {"`+proctest.Env+`": "`+mark+`"}}}}`), 0o644)
	cmd := exec.Command(buildBinary(t), "serve", "--config", cfg, "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin")
	stdin, err := cmd.StdinPipe() // open: the server keeps serving
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if up, err := proctest.Marked(mark); err != nil {
			t.Fatal(err)
		} else if len(up) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the upstream did not start within 30 s")
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	left, err := proctest.WaitGone(mark, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("3 s after serve was killed, its upstream still runs as %v", left)
		for _, p := range left {
			if proc, err := os.FindProcess(p.PID); err == nil {
				proc.Kill()
			}
		}
	}
}
