package callers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// FuzzAuthenticate: any bearer token, a JWT or not, is answered with a
// caller or an ErrUnauthenticated error, never a panic, and only a
// configured token or a JWT the test key signed names a caller: with
// toolscout.jwt and with toolscout.oauth alike.
func FuzzAuthenticate(f *testing.F) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	js, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256"}}})
	keys, err := ParseKeys(js)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Now()
	set, err := New(Options{JWT: &JWTOptions{Keys: keys, Issuer: "https://id.example", Audience: "toolscout"},
		Callers: []Config{
			{Name: "ops", Tokens: []string{tokOps}, Allow: []string{"*"}},
			{Name: "bot", Claims: map[string]string{"sub": "bot-1"}, Allow: []string{"*"}},
		}})
	if err != nil {
		f.Fatal(err)
	}
	const resource = "https://toolscout.example/mcp"
	oauthSet, err := New(Options{OAuth: &OAuthOptions{Issuer: "https://id.example", Resource: resource, Scopes: []string{"tools.read", "tools.run"}, ReadScopes: []string{"tools.read"}, Keys: StaticKeys{keys}},
		Callers: []Config{
			{Name: "ops", Tokens: []string{tokOps}, Allow: []string{"*"}},
			{Name: "bot", Claims: map[string]string{"sub": "bot-1"}, Allow: []string{"*"}},
		}})
	if err != nil {
		f.Fatal(err)
	}
	good := sign(f, key, jose.ES256, "k1", map[string]any{"iss": "https://id.example", "aud": "toolscout", "sub": "bot-1", "exp": now.Add(time.Hour).Unix()})
	goodOAuth := sign(f, key, jose.ES256, "k1", map[string]any{"iss": "https://id.example", "aud": resource, "sub": "bot-1", "scope": "tools.read", "exp": now.Add(time.Hour).Unix()})
	for _, s := range []string{tokOps, good, goodOAuth, good[:len(good)-3], "a.b.c", "..", "eyJhbGciOiJub25lIn0.e30.", unsigned(map[string]any{"sub": "bot-1"}), ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		id, err := set.Authenticate(context.Background(), tok)
		switch {
		case err != nil && !errors.Is(err, ErrUnauthenticated):
			t.Fatalf("Authenticate(%q): %v does not wrap ErrUnauthenticated", tok, err)
		case err == nil && tok != tokOps && tok != good:
			t.Fatalf("Authenticate(%q) = %s: only the configured token and the signed JWT name a caller", tok, id.Name)
		}
		id, err = oauthSet.Authenticate(context.Background(), tok)
		switch {
		case err != nil && !errors.Is(err, ErrUnauthenticated):
			t.Fatalf("OAuth: Authenticate(%q): %v does not wrap ErrUnauthenticated", tok, err)
		case err == nil && tok != tokOps && tok != goodOAuth:
			t.Fatalf("OAuth: Authenticate(%q) = %s: only the configured token and the signed access token name a caller", tok, id.Name)
		case err == nil && tok == goodOAuth && !id.ReadOnly:
			t.Fatalf("OAuth: a tools.read token is not read-only")
		}
	})
}
