package gateway

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolscout/toolscout/internal/proctest"
)

// TestCloseEndsUpstreamProcesses: when the gateway closes (a stdio session
// or a CLI run ends), every process its stdio upstreams started is gone
// within 3 s, not only the one toolscout started: npx runs the server as
// a grandchild (npm exec, sh -c, node) and a wrapper script's shell
// leaves its server behind when the shell alone is signalled. npx left
// the everything reference server running for about 60 s (issue 36).
func TestCloseEndsUpstreamProcesses(t *testing.T) {
	if !proctest.Supported() {
		t.Skip("finds processes through /proc")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	everything := filepath.Join(root, "node_modules", ".bin", "mcp-server-everything")
	npx, err := exec.LookPath("npx")
	if _, serr := os.Stat(everything); serr != nil || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("npx or mcp-server-everything is not installed: run npm ci (make test does)")
		}
		t.Skip("npx or mcp-server-everything is not installed: run npm ci (make test does)")
	}
	wrapper := filepath.Join(t.TempDir(), "everything.sh")
	// No exec: the shell waits for its server, as many wrappers do.
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\n"+everything+" \"$@\"\necho done >&2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	mark := proctest.NewMark()
	env := map[string]string{proctest.Env: mark}
	g := New(Options{Upstreams: []UpstreamConfig{
		// --no-install: npx finds the server in the repository's
		// node_modules (Cwd) and never reaches for the network.
		{Domain: "npx", Command: npx, Args: []string{"--no-install", "mcp-server-everything"}, Cwd: root, Env: env},
		{Domain: "wrapped", Command: wrapper, Env: env},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	g.Start(ctx)
	defer g.Close() // a second Close does nothing
	g.WaitReady(ctx)
	for _, st := range g.Upstreams().Status() {
		if st.State != "up" {
			t.Fatalf("upstream %s is %s (%v), want up", st.Domain, st.State, st.Err)
		}
	}
	running, err := proctest.Marked(mark)
	if err != nil {
		t.Fatal(err)
	}
	// npm exec, sh -c and node for npx; sh and node for the wrapper.
	if len(running) < 5 {
		t.Fatalf("the upstreams run as %v, want at least 5 processes", running)
	}
	own, _ := proctest.Stat(os.Getpid())
	for _, p := range running {
		if p.PGID == own.PGID {
			t.Errorf("upstream process %v is in toolscout's process group, want a group of its own", p)
		}
	}

	start := time.Now()
	g.Close()
	took := time.Since(start)
	left, err := proctest.WaitGone(mark, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Fatalf("3 s after Close returned (it took %s), upstream processes still ran: %v", took.Round(time.Millisecond), left)
	}
	if took > 5*time.Second {
		t.Errorf("Close took %s, want the upstreams stopped within a second or two", took.Round(time.Millisecond))
	}
	t.Logf("Close took %s", took.Round(time.Millisecond))
}
