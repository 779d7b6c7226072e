package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/server/gateway"
)

// TestUpstreamIdentity: an OAuth server's entry says whose identity its
// tool calls carry; only "identity": "caller" with "mode": "forward"
// gives the gateway a CallerIdentity (through attachOAuth, as serve
// builds it), and no entry forwards by default.
func TestUpstreamIdentity(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "servers.json")
	os.WriteFile(file, []byte(`{"mcpServers": {
		"percaller": {"url": "https://a.example/mcp", "auth": {"type": "oauth", "identity": "caller", "mode": "forward"}},
		"own": {"url": "https://b.example/mcp", "auth": {"type": "oauth", "identity": "toolscout"}},
		"plain": {"url": "https://c.example/mcp", "auth": {"type": "oauth"}},
		"headers": {"url": "https://d.example/mcp", "headers": {"X-Api-Key": "k"}}}}`), 0o600)
	g := globalFlags{configs: []string{file}, dataDir: filepath.Join(dir, "data")}
	gc, err := g.gatewayConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"percaller": gateway.IdentityForward, "own": "", "plain": "", "headers": ""}
	for _, u := range gc.Upstreams {
		if u.CallerIdentity != want[u.Domain] {
			t.Errorf("%s: CallerIdentity = %q, want %q", u.Domain, u.CallerIdentity, want[u.Domain])
		}
		if u.Exchange != nil {
			t.Errorf("%s: an exchange config without mode exchange", u.Domain)
		}
	}
}

// TestUpstreamIdentityExchange: "mode": "exchange" gives the gateway
// IdentityExchange with toolscout's client there (the secret read from
// its file), the entry's scopes and token endpoint; a secret file that
// cannot be read is the config's error, naming the key.
func TestUpstreamIdentityExchange(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "servers.json")
	os.WriteFile(filepath.Join(dir, "client.secret"), []byte("exchange-secret-0123456789\n"), 0o600)
	os.WriteFile(file, []byte(`{"mcpServers": {
		"found": {"url": "https://a.example/mcp", "auth": {"type": "oauth", "identity": "caller", "mode": "exchange", "client_id": "ts-client", "client_secret_file": "client.secret", "scopes": ["read"]}},
		"given": {"url": "https://b.example/mcp", "auth": {"type": "oauth", "identity": "caller", "mode": "exchange", "client_id": "ts-client", "client_secret_file": "client.secret", "token_endpoint": "https://id.example/oauth2/token"}}}}`), 0o600)
	g := globalFlags{configs: []string{file}, dataDir: filepath.Join(dir, "data")}
	gc, err := g.gatewayConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]gateway.Exchange{
		"found": {ClientID: "ts-client", ClientSecret: "exchange-secret-0123456789", Scopes: []string{"read"}},
		"given": {ClientID: "ts-client", ClientSecret: "exchange-secret-0123456789", TokenEndpoint: "https://id.example/oauth2/token"},
	}
	for _, u := range gc.Upstreams {
		w := want[u.Domain]
		if u.CallerIdentity != gateway.IdentityExchange || u.Exchange == nil || u.Exchange.ClientID != w.ClientID || u.Exchange.ClientSecret != w.ClientSecret ||
			strings.Join(u.Exchange.Scopes, " ") != strings.Join(w.Scopes, " ") || u.Exchange.TokenEndpoint != w.TokenEndpoint {
			t.Errorf("%s: CallerIdentity %q, Exchange %+v, want %q and %+v", u.Domain, u.CallerIdentity, u.Exchange, gateway.IdentityExchange, w)
		}
	}
	os.Remove(filepath.Join(dir, "client.secret"))
	if _, err := (&globalFlags{configs: []string{file}, dataDir: filepath.Join(dir, "data")}).gatewayConfig(); err == nil || !strings.Contains(err.Error(), "auth.client_secret_file") {
		t.Errorf("gatewayConfig without the secret file = %v, want an error naming auth.client_secret_file", err)
	}
}

func TestUpstreamIdentityErrors(t *testing.T) {
	for _, tc := range []struct{ name, entry, path, reason string }{
		{"unknown identity", `{"url": "https://r.example", "auth": {"type": "oauth", "identity": "user", "mode": "forward"}}`, "mcpServers.a.auth.identity", `"user": "toolscout" (the default`},
		{"identity not a string", `{"url": "https://r.example", "auth": {"type": "oauth", "identity": true}}`, "mcpServers.a.auth", `are strings`},
		{"caller without a mode", `{"url": "https://r.example", "auth": {"type": "oauth", "identity": "caller"}}`, "mcpServers.a.auth", `needs a "mode": "forward"`},
		{"unknown mode", `{"url": "https://r.example", "auth": {"type": "oauth", "identity": "caller", "mode": "copy"}}`, "mcpServers.a.auth.mode", `"copy": "forward" (the caller's own token sent as it came) or "exchange"`},
		{"exchange without a client", `{"url": "https://r.example", "auth": {"type": "oauth", "identity": "caller", "mode": "exchange"}}`, "mcpServers.a.auth", `give the client registered there for toolscout, "client_id" and "client_secret_file"`},
		{"exchange without a secret", `{"url": "https://r.example", "auth": {"type": "oauth", "client_id": "ts", "identity": "caller", "mode": "exchange"}}`, "mcpServers.a.auth", `"client_secret_file"`},
		{"token endpoint without exchange", `{"url": "https://r.example", "auth": {"type": "oauth", "identity": "caller", "mode": "forward", "token_endpoint": "https://id.example/token"}}`, "mcpServers.a.auth.token_endpoint", `goes with "identity": "caller", "mode": "exchange"`},
		{"token endpoint over plain http", `{"url": "https://r.example", "auth": {"type": "oauth", "client_id": "ts", "client_secret_file": "s", "identity": "caller", "mode": "exchange", "token_endpoint": "http://id.example/token"}}`, "mcpServers.a.auth.token_endpoint", `an https URL (http only on a loopback address)`},
		{"token endpoint not a URL", `{"url": "https://r.example", "auth": {"type": "oauth", "client_id": "ts", "client_secret_file": "s", "identity": "caller", "mode": "exchange", "token_endpoint": "token"}}`, "mcpServers.a.auth.token_endpoint", `an https URL`},
		{"token endpoint not a string", `{"url": "https://r.example", "auth": {"type": "oauth", "client_id": "ts", "client_secret_file": "s", "identity": "caller", "mode": "exchange", "token_endpoint": 1}}`, "mcpServers.a.auth", `are strings`},
		{"mode without caller", `{"url": "https://r.example", "auth": {"type": "oauth", "mode": "forward"}}`, "mcpServers.a.auth.mode", `goes with "identity": "caller"`},
		{"caller for a command", `{"command": "srv", "auth": {"type": "oauth", "identity": "caller", "mode": "forward"}}`, "mcpServers.a.auth", "remote servers (url), not to a command"},
		{"caller and forward_authorization", `{"url": "https://r.example", "forward_authorization": true, "auth": {"type": "oauth", "identity": "caller", "mode": "forward"}}`, "mcpServers.a.auth", "remove one"},
		{"misspelt key", `{"url": "https://r.example", "auth": {"type": "oauth", "identiy": "caller"}}`, "mcpServers.a.auth.identiy", `did you mean "identity"?`},
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

// TestCheckCallerIdentity: a server acting with its callers' identity
// needs callers that sign in with an identity provider's tokens
// (toolscout.jwt or toolscout.oauth): static caller tokens, or no
// callers, are refused with what to configure.
func TestCheckCallerIdentity(t *testing.T) {
	ups := []gateway.UpstreamConfig{{Domain: "plain", URL: "https://p.example"}, {Domain: "tracker", URL: "https://t.example", CallerIdentity: gateway.IdentityForward}}
	for _, tc := range []struct {
		name    string
		callers *callersSpec
		wantErr bool
	}{
		{"no callers", nil, true},
		{"static caller tokens", &callersSpec{Callers: map[string]callerEntry{"ops": {TokenFiles: []string{"ops.token"}}}}, true},
		{"jwt callers", &callersSpec{JWT: &jwtEntry{Issuer: "i"}}, false},
		{"oauth callers", &callersSpec{OAuth: &oauthEntry{Issuer: "i"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkCallerIdentity(&gatewayConfig{Upstreams: ups, Callers: tc.callers})
			if (err != nil) != tc.wantErr {
				t.Fatalf("checkCallerIdentity = %v, want an error: %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "mcpServers.tracker.auth.identity") || err != nil && !strings.Contains(err.Error(), "toolscout.oauth or toolscout.jwt") {
				t.Errorf("error %q does not name the entry and what to configure", err)
			}
		})
	}
	if err := checkCallerIdentity(&gatewayConfig{Upstreams: ups[:1]}); err != nil {
		t.Errorf("no server acting with its callers' identity: %v", err)
	}
}

// TestServeRefusesCallerIdentityWithoutIdentityProvider: serve checks
// the identity against the callers of every --config file, before it
// connects anything: static caller tokens are refused with what to do.
func TestServeRefusesCallerIdentityWithoutIdentityProvider(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ops.token"), []byte("ops-token-0123456789abcdef\n"), 0o600)
	cfg := filepath.Join(dir, "servers.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {"tracker": {"url": "http://127.0.0.1:9/mcp", "auth": {"type": "oauth", "identity": "caller", "mode": "forward"}}},
	  "toolscout": {"callers": {"ops": {"token_files": ["ops.token"], "allow": ["*"]}}}}`), 0o600)
	// A serve that did not refuse would run until ctx ends: bounded, so
	// that the test fails rather than hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"serve", "--config", cfg, "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin", "--http", "127.0.0.1:0"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "mcpServers.tracker.auth.identity") || strings.Contains(err.Error()+stderr.String(), "ops-token-0123456789abcdef") {
		t.Errorf("serve = %v (stderr %q), want the identity refused, naming the entry, without the caller's token", err, stderr.String())
	}
}

// TestServeRefusesCallerIdentityOverStdio: over stdio no request
// carries a caller's token, so serve refuses a server acting with its
// callers' identity at start, naming the entry and what to do, instead
// of refusing each of its calls (with identity-provider callers and
// TOOLSCOUT_CALLER set, serve started before); without callers, the
// advice is HTTP, not an identity provider.
func TestServeRefusesCallerIdentityOverStdio(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "jwks.json"), []byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","use":"sig","alg":"ES256","kid":"k1"}]}`), 0o600)
	for _, tc := range []struct{ name, toolscout string }{
		{"jwt callers", `, "toolscout": {"jwt": {"jwks_file": "jwks.json", "issuer": "https://id.example", "audience": "toolscout"}, "callers": {"bot": {"jwt_claims": {"sub": "b"}, "allow": ["*"]}}}`},
		{"no callers", ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TOOLSCOUT_CALLER", "bot")
			cfg := filepath.Join(dir, "servers.json")
			os.WriteFile(cfg, []byte(`{"mcpServers": {"tracker": {"url": "http://127.0.0.1:9/mcp", "auth": {"type": "oauth", "identity": "caller", "mode": "forward"}}}`+tc.toolscout+`}`), 0o600)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			err := run(ctx, []string{"serve", "--config", cfg, "--data-dir", filepath.Join(dir, "data"), "--embedder", "builtin"}, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), "mcpServers.tracker.auth.identity") || !strings.Contains(err.Error(), "over stdio") || !strings.Contains(err.Error(), "--http") {
				t.Errorf("serve over stdio = %v (stderr %q), want the identity refused, naming the entry, stdio and --http", err, stderr.String())
			}
		})
	}
}
