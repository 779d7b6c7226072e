package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallersConfigErrors: a bad caller is refused with the file, the
// caller and the key, and what to do.
func TestCallersConfigErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ops.token"), []byte("ops-token-0123456789abcdef\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "empty.token"), []byte("\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "jwks.json"), []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`), 0o600)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600)
	tests := []struct {
		name, toolscout string
		path, reason    string
	}{
		{"missing token file", `{"callers": {"ops": {"token_files": ["nope.token"], "allow": ["memory"]}}}`,
			"toolscout.callers.ops.token_files[0]", "no such file"},
		{"empty token file", `{"callers": {"ops": {"token_files": ["empty.token"], "allow": ["memory"]}}}`,
			"toolscout.callers.ops.token_files[0]", "empty"},
		{"empty allow", `{"callers": {"ops": {"token_files": ["ops.token"], "allow": []}}}`,
			"toolscout.callers.ops.allow", "empty"},
		{"no allow", `{"callers": {"ops": {"token_files": ["ops.token"]}}}`,
			"toolscout.callers.ops.allow", "empty"},
		{"bad glob", `{"callers": {"ops": {"token_files": ["ops.token"], "allow": ["memory", "fs__[x"]}}}`,
			"toolscout.callers.ops.allow[1]", "syntax error"},
		{"typo", `{"callers": {"ops": {"token_files": ["ops.token"], "alow": ["memory"]}}}`,
			"toolscout.callers.ops.alow", `did you mean "allow"`},
		{"unknown key", `{"callers": {"ops": {"token_files": ["ops.token"], "allow": ["memory"], "role": "x"}}}`,
			"toolscout.callers.ops.role", "unknown key"},
		{"wrong type", `{"callers": {"ops": {"token_files": "ops.token", "allow": ["memory"]}}}`,
			"toolscout.callers.ops.token_files", "expected"},
		{"no identity", `{"callers": {"ops": {"allow": ["memory"]}}}`,
			"toolscout.callers.ops", "token_files"},
		{"claims without jwt", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}}`,
			"toolscout.callers.bot.jwt_claims", "jwks_file"},
		{"jwt without callers", `{"jwt": {"jwks_file": "jwks.json", "issuer": "i", "audience": "a"}}`,
			"toolscout.jwt", "no callers"},
		{"jwt without keys", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "jwt": {"issuer": "i", "audience": "a"}}`,
			"toolscout.jwt", "jwks_file"},
		{"jwt symmetric key", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "jwt": {"jwks_file": "jwks.json", "issuer": "i", "audience": "a"}}`,
			"toolscout.jwt.jwks_file", "no public signing key"},
		{"jwt missing file", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "jwt": {"key_file": "nope.pem", "issuer": "i", "audience": "a"}}`,
			"toolscout.jwt.key_file", "no such file"},
		{"jwt key typo", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "jwt": {"jwks_file": "jwks.json", "isuer": "i", "audience": "a"}}`,
			"toolscout.jwt.isuer", `did you mean "issuer"`},
		{"empty callers", `{"callers": {}}`, "toolscout.callers", "empty"},
		{"oauth without callers", `{"oauth": {"issuer": "https://id.example", "resource": "https://ts.example/mcp"}}`,
			"toolscout.oauth", "no callers"},
		{"oauth without issuer", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "oauth": {"resource": "https://ts.example/mcp"}}`,
			"toolscout.oauth.issuer", "missing"},
		{"oauth without resource", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "oauth": {"issuer": "https://id.example"}}`,
			"toolscout.oauth.resource", "missing"},
		{"oauth issuer not a URL", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "oauth": {"issuer": "id.example", "resource": "https://ts.example/mcp"}}`,
			"toolscout.oauth.issuer", "not an absolute http(s) URL"},
		{"oauth resource with a fragment", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "oauth": {"issuer": "https://id.example", "resource": "https://ts.example/mcp#x"}}`,
			"toolscout.oauth.resource", "fragment"},
		{"oauth read scope not a scope", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "oauth": {"issuer": "https://id.example", "resource": "https://ts.example/mcp", "scopes": ["a"], "read_scopes": ["b"]}}`,
			"toolscout.oauth.read_scopes[0]", "not one of scopes"},
		{"oauth bad jwks_url", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "oauth": {"issuer": "https://id.example", "resource": "https://ts.example/mcp", "jwks_url": "keys.json"}}`,
			"toolscout.oauth.jwks_url", "https URL"},
		{"oauth key typo", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "oauth": {"issuer": "https://id.example", "resource": "https://ts.example/mcp", "scope": ["a"]}}`,
			"toolscout.oauth.scope", `did you mean "scopes"`},
		{"oauth and jwt", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "oauth": {"issuer": "https://id.example", "resource": "https://ts.example/mcp"}, "jwt": {"key_file": "key.pem", "issuer": "i", "audience": "a"}}`,
			"toolscout.oauth", "both set"},
		{"oauth introspection without secret", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "oauth": {"issuer": "https://id.example", "resource": "https://ts.example/mcp", "introspection": {"client_id": "ts"}}}`,
			"toolscout.oauth.introspection", "client_secret_file"},
		{"oauth introspection missing secret file", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "oauth": {"issuer": "https://id.example", "resource": "https://ts.example/mcp", "introspection": {"client_id": "ts", "client_secret_file": "nope"}}}`,
			"toolscout.oauth.introspection.client_secret_file", "no such file"},
		{"oauth introspection key typo", `{"callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["memory"]}}, "oauth": {"issuer": "https://id.example", "resource": "https://ts.example/mcp", "introspection": {"client_id": "ts", "client_secret_file": "ops.token", "endpont": "x"}}}`,
			"toolscout.oauth.introspection.endpont", `did you mean "endpoint"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, "servers.json")
			if err := os.WriteFile(file, []byte(`{"mcpServers": {}, "toolscout": `+tc.toolscout+`}`), 0o600); err != nil {
				t.Fatal(err)
			}
			g := globalFlags{configs: []string{file}}
			_, _, err := g.callers("", nil)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.File != file || ce.Path != tc.path || !strings.Contains(ce.Reason, tc.reason) {
				t.Errorf("callers(%s) = %v, want %s: ...%s...", tc.toolscout, err, tc.path, tc.reason)
			}
		})
	}
	// A good one, and the same callers given twice.
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"mcpServers": {}, "toolscout": {"callers": {"ops": {"token_files": ["ops.token"], "allow": ["memory"]}}}}`), 0o600)
	g := globalFlags{configs: []string{good}}
	_, set, err := g.callers("", nil)
	if err != nil || set.Caller("ops") == nil {
		t.Fatalf("callers = %v, %v", set, err)
	}
	if _, _, err := g.callers(good, nil); err == nil || !strings.Contains(err.Error(), "one file") {
		t.Errorf("--callers and --config both defining callers: %v, want an error", err)
	}
	g = globalFlags{}
	if _, set, err := g.callers(good, nil); err != nil || set.Caller("ops") == nil {
		t.Errorf("--callers alone = %v, %v", set, err)
	}
}

func TestStdioCaller(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ops.token"), []byte("ops-token-0123456789abcdef\n"), 0o600)
	file := filepath.Join(dir, "c.json")
	os.WriteFile(file, []byte(`{"toolscout": {"callers": {"ops": {"token_files": ["ops.token"], "allow": ["memory"]}}}}`), 0o600)
	_, set, err := (&globalFlags{}).callers(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ env, want, err string }{
		{"", "", "set TOOLSCOUT_CALLER"},
		{"opz", "", "not a caller"},
		{"ops", "ops", ""},
	} {
		c, err := stdioCaller(set, func(string) string { return tc.env })
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("TOOLSCOUT_CALLER=%q: %v, want an error containing %q", tc.env, err, tc.err)
		case tc.err == "" && (err != nil || c.Name != tc.want):
			t.Errorf("TOOLSCOUT_CALLER=%q: %v, %v", tc.env, c, err)
		}
	}
}

// TestOAuthDoctorCheck: doctor says when the issuer's keys cannot be
// fetched, naming the issuer and what to check.
func TestOAuthDoctorCheck(t *testing.T) {
	for _, jwks := range []string{"", "http://127.0.0.1:9/jwks"} {
		sp := &callersSpec{OAuth: &oauthEntry{Issuer: "http://127.0.0.1:9/realms/acme", Resource: "https://ts.example/mcp", JWKSURL: jwks}}
		cs := oauthChecks(t.Context(), sp)
		if len(cs) != 1 || cs[0].note || !strings.Contains(cs[0].detail, "issuer http://127.0.0.1:9/realms/acme") || !strings.Contains(cs[0].fix, "toolscout.oauth.") {
			t.Errorf("oauthChecks with jwks_url %q = %+v, want one failed check naming the issuer and the key to fix", jwks, cs)
		}
	}
	if cs := oauthChecks(t.Context(), &callersSpec{}); cs != nil {
		t.Errorf("oauthChecks without oauth = %+v, want none", cs)
	}
}
