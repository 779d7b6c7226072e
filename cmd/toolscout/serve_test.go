package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeHTTPNeedsATokenOffLoopback(t *testing.T) {
	t.Setenv("TOOLSCOUT_AUTH_TOKEN", "")
	dir := t.TempDir()
	_, stderr, code := runCLI(t, "serve", "--http", "0.0.0.0:0", "--data-dir", dir, "--embedder", "builtin")
	if code != 2 || !strings.Contains(stderr, "TOOLSCOUT_AUTH_TOKEN") || !strings.Contains(stderr, "--insecure") {
		t.Errorf("serve --http 0.0.0.0:0 without a token: exit %d, %q", code, stderr)
	}
	empty := filepath.Join(dir, "token")
	os.WriteFile(empty, []byte("\n"), 0o600)
	if _, stderr, code := runCLI(t, "serve", "--http", "127.0.0.1:0", "--auth-token-file", empty, "--data-dir", dir); code == 0 || !strings.Contains(stderr, "is empty") {
		t.Errorf("empty token file: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runCLI(t, "serve", "--http", "127.0.0.1:0", "--allow-origin", "evil.example", "--data-dir", dir); code != 2 || !strings.Contains(stderr, "scheme://host") {
		t.Errorf("bad --allow-origin: exit %d, %q", code, stderr)
	}
}
