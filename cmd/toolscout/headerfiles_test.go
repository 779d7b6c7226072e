package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHeaderFiles: a remote server's header can be read from a file, so
// that the secret stays out of the config; a bad one is refused with the
// server and the header.
func TestHeaderFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "remote.auth"), []byte("Bearer s3cret-token\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "two.lines"), []byte("Bearer a\nX-Evil: 1\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "empty"), nil, 0o600)
	file := filepath.Join(dir, "servers.json")
	gc, err := parseConfig(file, []byte(`{"mcpServers": {"remote": {"url": "https://remote.example/mcp", "headers": {"X-Team": "a"}, "header_files": {"Authorization": "remote.auth"}}}}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if h := gc.Upstreams[0].Headers; h["Authorization"] != "Bearer s3cret-token" || h["X-Team"] != "a" {
		t.Errorf("headers = %v, want the file's Authorization and the inline X-Team", h)
	}
	for _, tc := range []struct{ entry, path, reason string }{
		{`{"url": "https://r.example", "header_files": {"Authorization": "nope.auth"}}`, "mcpServers.remote.header_files.Authorization", "no such file"},
		{`{"url": "https://r.example", "header_files": {"Authorization": "empty"}}`, "mcpServers.remote.header_files.Authorization", "empty"},
		{`{"url": "https://r.example", "header_files": {"Authorization": "two.lines"}}`, "mcpServers.remote.header_files.Authorization", "one line"},
		{`{"url": "https://r.example", "headers": {"Authorization": "x"}, "header_files": {"Authorization": "remote.auth"}}`, "mcpServers.remote.header_files.Authorization", "once"},
		{`{"url": "https://r.example", "header_files": {"Bad Name": "remote.auth"}}`, "mcpServers.remote.header_files.Bad Name", "no HTTP header"},
		{`{"command": "srv", "header_files": {"Authorization": "remote.auth"}}`, "mcpServers.remote.header_files", "remote servers"},
	} {
		_, err := parseConfig(file, []byte(`{"mcpServers": {"remote": `+tc.entry+`}}`), env(nil))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Path != tc.path || !strings.Contains(ce.Reason, tc.reason) {
			t.Errorf("%s: %v, want %s: ...%s...", tc.entry, err, tc.path, tc.reason)
		}
	}
}

// TestCallerHeaderFiles: per-caller upstream headers come from files and
// name callers that toolscout.callers defines; forwarding a caller's own
// Authorization is said per server.
func TestCallerHeaderFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ops.auth"), []byte("Bearer ops-upstream\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "ops.token"), []byte("ops-token-0123456789abcdef\n"), 0o600)
	file := filepath.Join(dir, "servers.json")
	os.WriteFile(file, []byte(`{"mcpServers": {"remote": {"url": "https://remote.example/mcp", "forward_authorization": true,
	  "caller_header_files": {"ops": {"Authorization": "ops.auth"}}}},
	  "toolscout": {"callers": {"ops": {"token_files": ["ops.token"], "allow": ["remote"]}}}}`), 0o600)
	g := globalFlags{configs: []string{file}}
	gc, err := loadConfigs(g.configs)
	if err != nil {
		t.Fatal(err)
	}
	u := gc.Upstreams[0]
	if !u.ForwardAuthorization || u.CallerHeaders["ops"]["Authorization"] != "Bearer ops-upstream" {
		t.Errorf("upstream = %+v", u)
	}
	_, set, err := g.callers("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkCallerHeaders(gc, set); err != nil {
		t.Errorf("checkCallerHeaders: %v", err)
	}
	gc.Upstreams[0].CallerHeaders["bot"] = map[string]string{"Authorization": "x"}
	if err := checkCallerHeaders(gc, set); err == nil || !strings.Contains(err.Error(), "caller_header_files.bot: no such caller") {
		t.Errorf("an unknown caller: %v", err)
	}
	if err := checkCallerHeaders(gc, nil); err == nil || !strings.Contains(err.Error(), "no callers are defined") {
		t.Errorf("no callers: %v", err)
	}
	for _, tc := range []struct{ entry, path, reason string }{
		{`{"command": "srv", "forward_authorization": true}`, "mcpServers.remote.forward_authorization", "remote servers"},
		{`{"url": "https://r.example", "caller_header_files": {"ops": {}}}`, "mcpServers.remote.caller_header_files.ops", "empty"},
		{`{"url": "https://r.example", "caller_header_files": {"ops": {"Authorization": "nope"}}}`, "mcpServers.remote.caller_header_files.ops.Authorization", "no such file"},
	} {
		_, err := parseConfig(file, []byte(`{"mcpServers": {"remote": `+tc.entry+`}}`), env(nil))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Path != tc.path || !strings.Contains(ce.Reason, tc.reason) {
			t.Errorf("%s: %v, want %s: ...%s...", tc.entry, err, tc.path, tc.reason)
		}
	}
}

// TestConfigSecrets: the values a config holds for no caller's eyes are
// the headers of header_files and caller_header_files, and the headers
// and env variables whose names say they hold a credential; the
// commands' Redactor learns them.
func TestConfigSecrets(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "remote.auth"), []byte("Bearer from-a-file-0123\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "ops.auth"), []byte("Bearer ops-file-0123\n"), 0o600)
	file := filepath.Join(dir, "servers.json")
	gc, err := parseConfig(file, []byte(`{"mcpServers": {
	  "remote": {"url": "https://remote.example/mcp", "headers": {"X-Api-Key": "${KEY}", "Accept-Language": "en-GB-oxendict"},
	    "header_files": {"X-Custom": "remote.auth"}, "caller_header_files": {"ops": {"Authorization": "ops.auth"}}},
	  "local": {"command": "srv", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_0123456789", "LOG_LEVEL": "verbose-mode"}}}}`),
		env(map[string]string{"KEY": "key-from-env-0123"}))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(gc.Secrets)
	want := []string{"Bearer from-a-file-0123", "Bearer ops-file-0123", "ghp_0123456789", "key-from-env-0123"}
	if !slices.Equal(gc.Secrets, want) {
		t.Errorf("Secrets = %q, want %q", gc.Secrets, want)
	}
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"Authorization", true}, {"Proxy-Authorization", true}, {"X-Api-Key", true}, {"Cookie", true},
		{"DB_PASSWORD", true}, {"OPENAI_API_KEY", true}, {"Accept", false}, {"MEMORY_FILE_PATH", false},
	} {
		if got := secretName(tc.name); got != tc.want {
			t.Errorf("secretName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
