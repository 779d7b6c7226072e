package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/exchangetest"
	"github.com/toolscout/toolscout/server/upauth"
)

// TestCallerIdentityExchangeEndToEnd: the binary, serving over HTTP a
// config whose OAuth server acts with each caller's identity by token
// exchange ("mode": "exchange", client_id and client_secret_file),
// with callers signing in with an identity provider's JWTs
// (toolscout.jwt): alice's call reaches the server as alice and bob's
// as bob, each with a token the authorization server issued for the
// server; mallory, whom the authorization server does not know, gets
// its refusal, naming the server. The listing is toolscout's own
// sign-in (credentials file). No token of anyone's nor the client
// secret appears in an answer or the log.
func TestCallerIdentityExchangeEndToEnd(t *testing.T) {
	t.Parallel()
	const clientID, clientSecret, own = "toolscout-exchanger", "exchanger-secret-0123456789abcdef", "toolscout-own-token-0123456789abcdef"
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	jwts := map[string]string{}
	for _, user := range []string{"alice", "bob", "mallory"} {
		if jwts[user], err = jwt.Signed(sig).Claims(map[string]any{"iss": "https://id.example", "aud": "toolscout", "sub": user,
			"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}).Serialize(); err != nil {
			t.Fatal(err)
		}
	}
	as := exchangetest.StartAS(t, clientID, clientSecret, map[string]string{jwts["alice"]: "alice", jwts["bob"]: "bob"})
	upURL := exchangetest.StartUpstream(t, as, own, true)

	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("jwks.json", string(jwks))
	write("client.secret", clientSecret+"\n")
	cfg := map[string]any{
		"mcpServers": map[string]any{"id": map[string]any{"url": upURL, "auth": map[string]any{
			"type": "oauth", "identity": "caller", "mode": "exchange", "client_id": clientID, "client_secret_file": "client.secret"}}},
		"toolscout": map[string]any{
			"jwt": map[string]any{"jwks_file": "jwks.json", "issuer": "https://id.example", "audience": "toolscout"},
			"callers": map[string]any{
				"alice":   map[string]any{"jwt_claims": map[string]string{"sub": "alice"}, "allow": []string{"*"}},
				"bob":     map[string]any{"jwt_claims": map[string]string{"sub": "bob"}, "allow": []string{"*"}},
				"mallory": map[string]any{"jwt_claims": map[string]string{"sub": "mallory"}, "allow": []string{"*"}},
			},
		},
	}
	js, _ := json.Marshal(cfg)
	write("servers.json", string(js))
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	// toolscout's own sign-in, as toolscout auth login would leave it.
	if err := upauth.OpenStore(filepath.Join(data, upauth.FileName)).Put("id", &upauth.Entry{URL: upURL, AccessToken: own, TokenType: "Bearer", ClientID: clientID}); err != nil {
		t.Fatal(err)
	}

	bin := buildBinary(t)
	s := startServeHTTP(t, bin, []string{"OLLAMA_HOST=127.0.0.1:9"}, "serve", "--http", "127.0.0.1:0", "--embedder", "builtin",
		"--config", filepath.Join(dir, "servers.json"), "--data-dir", data)
	s.waitReady(t)
	var seen strings.Builder
	whoami := func(user string) (string, bool) {
		t.Helper()
		cs := connectAs(t, s, jwts[user], "2025-11-25")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_tool", Arguments: map[string]any{"tool_name": "id__whoami"}})
		if err != nil {
			t.Fatalf("execute_tool as %s: %v", user, err)
		}
		text := toolText(res)
		seen.WriteString(text)
		return text, res.IsError
	}
	for _, user := range []string{"alice", "bob", "alice"} {
		if got, isErr := whoami(user); isErr || got != "you are "+user {
			t.Errorf("whoami as %s = %q (error %v), want %q\n%s", user, got, isErr, "you are "+user, s.logText())
		}
	}
	if got := as.Counts(); got != "map[alice:1 bob:1]" {
		t.Errorf("exchanges by user: %s, want one each of alice and bob", got)
	}
	if got, isErr := whoami("mallory"); !isErr || !strings.Contains(got, `server "id"`) || !strings.Contains(got, "invalid_grant") || strings.Contains(got, "you are") {
		t.Errorf("whoami as mallory = %q (error %v), want the exchange refused, naming the server", got, isErr)
	}
	// The whole log, once serve has ended: what it writes as the
	// callers' upstream sessions close is in it.
	seen.WriteString(s.stop(t))
	for _, sec := range append(as.Issued(), jwts["alice"], jwts["bob"], jwts["mallory"], own, clientSecret) {
		if strings.Contains(seen.String(), sec) {
			t.Errorf("a secret (%.10s…) appears in an answer or the log", sec)
		}
	}
}
