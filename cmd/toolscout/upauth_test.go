package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/server/upauth"
)

func TestParseUpstreamAuth(t *testing.T) {
	gc, err := parseConfig("c.json", []byte(`{"mcpServers": {
		"remote": {"url": "https://remote.example/mcp", "auth": {"type": "oauth", "client_id": "toolscout-cli", "scopes": ["read", "write"]}},
		"open": {"url": "https://open.example/mcp", "auth": {"type": "oauth"}},
		"confidential": {"url": "https://c.example/mcp", "auth": {"type": "oauth", "client_id": "ts", "client_secret_file": "secrets/ts.secret"}},
		"plain": {"url": "https://plain.example/mcp"}}}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]oauthUpstream{
		"remote":       {URL: "https://remote.example/mcp", ClientID: "toolscout-cli", Scopes: []string{"read", "write"}},
		"open":         {URL: "https://open.example/mcp"},
		"confidential": {URL: "https://c.example/mcp", ClientID: "ts", ClientSecretFile: filepath.Join("secrets", "ts.secret")},
	}
	if len(gc.OAuth) != len(want) {
		t.Fatalf("OAuth = %+v, want %+v", gc.OAuth, want)
	}
	for name, w := range want {
		if g := gc.OAuth[name]; g.URL != w.URL || g.ClientID != w.ClientID || !slices.Equal(g.Scopes, w.Scopes) || g.ClientSecretFile != w.ClientSecretFile {
			t.Errorf("OAuth[%s] = %+v, want %+v", name, g, w)
		}
	}
}

func TestParseUpstreamAuthErrors(t *testing.T) {
	for _, tc := range []struct{ name, entry, path, reason string }{
		{"other type", `{"url": "https://r.example", "auth": {"type": "basic"}}`, "mcpServers.a.auth.type", `"basic": the one type is "oauth"`},
		{"no type", `{"url": "https://r.example", "auth": {}}`, "mcpServers.a.auth.type", `the one type is "oauth"`},
		{"command", `{"command": "srv", "auth": {"type": "oauth"}}`, "mcpServers.a.auth", "remote servers (url), not to a command"},
		{"misspelt key", `{"url": "https://r.example", "auth": {"type": "oauth", "clientid": "x"}}`, "mcpServers.a.auth.clientid", `did you mean "client_id"?`},
		{"unknown key", `{"url": "https://r.example", "auth": {"type": "oauth", "client_secret": "x"}}`, "mcpServers.a.auth.client_secret", "unknown key: use type, client_id, client_secret_file, scopes"},
		{"secret without a client id", `{"url": "https://r.example", "auth": {"type": "oauth", "client_secret_file": "s"}}`, "mcpServers.a.auth.client_secret_file", "give the client_id"},
		{"not an object", `{"url": "https://r.example", "auth": "oauth"}`, "mcpServers.a.auth", `expected an object`},
		{"scopes not a list", `{"url": "https://r.example", "auth": {"type": "oauth", "scopes": "read"}}`, "mcpServers.a.auth.scopes", "expected"},
		{"scope with a space", `{"url": "https://r.example", "auth": {"type": "oauth", "scopes": ["read write"]}}`, "mcpServers.a.auth.scopes[0]", "not a scope"},
		{"client id with a newline", `{"url": "https://r.example", "auth": {"type": "oauth", "client_id": "a\nb"}}`, "mcpServers.a.auth.client_id", "not a client id"},
		{"and forwarded credentials", `{"url": "https://r.example", "forward_authorization": true, "auth": {"type": "oauth"}}`, "mcpServers.a.auth", "every caller uses toolscout's sign-in"},
		{"and an Authorization header", `{"url": "https://r.example", "headers": {"authorization": "Bearer x"}, "auth": {"type": "oauth"}}`, "mcpServers.a.auth", "remove one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig("c.json", []byte(`{"mcpServers": {"a": `+tc.entry+`}}`), env(nil))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("parseConfig(%s) = %v, want a ConfigError", tc.entry, err)
			}
			if ce.Path != tc.path || !strings.Contains(ce.Reason, tc.reason) {
				t.Errorf("error = %q (path %q), want path %q and a reason containing %q", err, ce.Path, tc.path, tc.reason)
			}
		})
	}
}

// TestDoctorSignIn: doctor says, for each server behind OAuth, whether
// toolscout is signed in, and what to run when not; never a token.
func TestDoctorSignIn(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {
		"tracker": {"url": "http://127.0.0.1:9/mcp", "auth": {"type": "oauth"}},
		"docs": {"url": "http://127.0.0.1:9/docs", "auth": {"type": "oauth", "scopes": ["read"]}}}}`), 0o600)
	data := filepath.Join(dir, "data")
	st := upauth.OpenStore(filepath.Join(data, upauth.FileName))
	if err := st.Put("docs", &upauth.Entry{URL: "http://127.0.0.1:9/docs", AccessToken: "docs-access-secret", RefreshToken: "docs-refresh-secret",
		Scopes: []string{"read"}, Expiry: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "doctor", "--config", cfg, "--data-dir", data, "--embedder", "builtin", "--connect-timeout", "5s")
	for _, want := range []string{
		"FAIL  sign-in    tracker: not signed in (toolscout auth login tracker)\n      fix: toolscout auth login tracker",
		"ok    sign-in    docs: signed in, valid until",
		"scopes read, refresh available",
		"unavailable: sign in again with toolscout auth login tracker",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if code == 0 || strings.Contains(out+errOut, "-secret") {
		t.Errorf("doctor exit %d (want non-zero: tracker is not signed in), a token in its output: %v", code, strings.Contains(out+errOut, "-secret"))
	}
}
