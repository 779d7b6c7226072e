package main

import (
	"errors"
	"os"
	"os/exec"
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

// TestServeInvalidCatalogFails: serve answers before its catalog is
// checked, but an invalid catalog still ends it with the error and exit 1,
// even when the client has already closed stdin.
func TestServeInvalidCatalogFails(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"domains":[{"name":"Bad Name","tools":[]}]}`), 0o644)
	for i := 0; i < 3; i++ {
		cmd := exec.Command(bin, "serve", "--catalog", bad, "--data-dir", t.TempDir(), "--embedder", "builtin")
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), `invalid domain name "Bad Name"`) {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
	}
}

// TestServeHelpNamesEnvironment: serve --help names the environment
// variables that choose what it serves, beside --condense.
func TestServeHelpNamesEnvironment(t *testing.T) {
	_, stderr, code := runCLI(t, "serve", "--help")
	for _, want := range []string{"TOOLSCOUT_EXPOSE", "TOOLSCOUT_FALLBACK", "TOOLSCOUT_AUTH_TOKEN", "OLLAMA_HOST", "--condense"} {
		if code != 0 || !strings.Contains(stderr, want) {
			t.Errorf("serve --help (exit %d) does not name %s:\n%s", code, want, stderr)
		}
	}
}
