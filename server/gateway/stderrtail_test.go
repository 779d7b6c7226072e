package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStderrTail: the tail keeps the last stderrTailSize bytes, from a
// line's start when it had to drop some.
func TestStderrTail(t *testing.T) {
	var tl stderrTail
	tl.Write([]byte("first line\n"))
	tl.Write([]byte("second line\n"))
	if got := tl.String(); got != "first line\nsecond line" {
		t.Errorf("tail = %q", got)
	}
	for i := 0; i < 1000; i++ {
		tl.Write([]byte("noise noise noise\n"))
	}
	tl.Write([]byte("the last words"))
	got := tl.String()
	if len(got) > stderrTailSize || !strings.HasSuffix(got, "the last words") || !strings.HasPrefix(got, "noise") {
		t.Errorf("tail of %d bytes = %.80q…", len(got), got)
	}
	var big stderrTail
	big.Write([]byte(strings.Repeat("x", 3*stderrTailSize) + "\nend"))
	if got := big.String(); got != "end" && len(got) > stderrTailSize {
		t.Errorf("one large write: tail of %d bytes", len(got))
	}
}

// TestUpstreamExitSaysWhy: a stdio server that exits before it answers
// is reported with what it wrote on stderr, not the protocol's bare EOF;
// one that says it is a toolscout refusing to run under toolscout is
// named as such.
func TestUpstreamExitSaysWhy(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, script, want string
	}{
		{"missing package", "echo 'npm ERR! 404 Not Found - GET @example/nonexistent-server' >&2; exit 1", "npm ERR! 404 Not Found"},
		{"a toolscout", "echo '" + DepthEnv + "=1: a toolscout started this one' >&2; exit 2", "the server is a toolscout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if err := os.WriteFile(script, []byte("#!/bin/sh\n"+tc.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			g := New(Options{Upstreams: []UpstreamConfig{{Domain: "x", Command: script, ConnectTimeout: 10 * time.Second}}})
			_, err := g.fleet.byDom["x"].connect(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("connect = %v, want it to say %q", err, tc.want)
			}
		})
	}
}
