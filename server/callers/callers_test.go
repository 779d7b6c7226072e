package callers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

func TestVisible(t *testing.T) {
	tests := []struct {
		name         string
		allow, deny  []string
		domain, tool string
		want         bool
		wantDomain   bool
	}{
		{"whole domain", []string{"memory"}, nil, "memory", "read_graph", true, true},
		{"other domain", []string{"memory"}, nil, "filesystem", "read_file", false, false},
		{"tool glob", []string{"filesystem__read_*"}, nil, "filesystem", "read_file", true, true},
		{"tool glob misses", []string{"filesystem__read_*"}, nil, "filesystem", "write_file", false, true},
		{"every tool", []string{"*"}, nil, "anything", "x", true, true},
		{"domain glob", []string{"mem*"}, nil, "memory", "x", true, true},
		{"deny a tool", []string{"everything"}, []string{"everything__long*"}, "everything", "longRunningOperation", false, true},
		{"deny leaves others", []string{"everything"}, []string{"everything__long*"}, "everything", "echo", true, true},
		{"deny whole domain", []string{"*"}, []string{"secret"}, "secret", "x", false, false},
		{"deny every tool of a domain", []string{"*"}, []string{"secret__*"}, "secret", "x", false, false},
		{"tool in every domain", []string{"*__echo"}, nil, "everything", "echo", true, true},
		{"prefix is not a domain", []string{"mem"}, nil, "memory", "x", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPolicy(tc.allow, tc.deny)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Visible(tc.domain, tc.tool); got != tc.want {
				t.Errorf("Visible(%q, %q) = %v, want %v", tc.domain, tc.tool, got, tc.want)
			}
			if got := p.VisibleDomain(tc.domain); got != tc.wantDomain {
				t.Errorf("VisibleDomain(%q) = %v, want %v", tc.domain, got, tc.wantDomain)
			}
		})
	}
	var none *Caller
	if !none.Visible("a", "b") || !none.VisibleDomain("a") {
		t.Error("a nil Caller (no callers configured) must see everything")
	}
}

func TestUnmatched(t *testing.T) {
	p, err := NewPolicy([]string{"memory", "filesystem__read_*", "memroy", "down"}, []string{"memory__nope_*"})
	if err != nil {
		t.Fatal(err)
	}
	got := p.Unmatched([]Tool{{"memory", "read_graph"}, {"filesystem", "read_file"}}, []string{"down"})
	if strings.Join(got, ",") != "memroy,memory__nope_*" {
		t.Errorf("Unmatched = %q, want [memroy memory__nope_*]", got)
	}
}

const tokOps = "ops-token-0123456789abcdef"

func TestNewErrors(t *testing.T) {
	jwtOK := &JWTOptions{Keys: testKeys(t, nil), Issuer: "https://id.example", Audience: "toolscout"}
	tests := []struct {
		name     string
		opts     Options
		wantPath string
		wantText string
	}{
		{"empty allow", Options{Callers: []Config{{Name: "ops", Tokens: []string{tokOps}}}}, "callers.ops.allow", "empty"},
		{"bad glob", Options{Callers: []Config{{Name: "ops", Tokens: []string{tokOps}, Allow: []string{"memory", "fs__[a"}}}}, "callers.ops.allow[1]", "syntax error"},
		{"empty tool part", Options{Callers: []Config{{Name: "ops", Tokens: []string{tokOps}, Allow: []string{"fs__"}}}}, "callers.ops.allow[0]", "tool part"},
		{"bad deny", Options{Callers: []Config{{Name: "ops", Tokens: []string{tokOps}, Allow: []string{"*"}, Deny: []string{""}}}}, "callers.ops.deny[0]", ""},
		{"no identity", Options{Callers: []Config{{Name: "ops", Allow: []string{"*"}}}}, "callers.ops", "no way to identify"},
		{"short token", Options{Callers: []Config{{Name: "ops", Tokens: []string{"abc"}, Allow: []string{"*"}}}}, "callers.ops.token_files[0]", "at least 16"},
		{"shared token", Options{Callers: []Config{{Name: "a", Tokens: []string{tokOps}, Allow: []string{"*"}}, {Name: "b", Tokens: []string{tokOps}, Allow: []string{"*"}}}}, "callers.b.token_files[0]", "caller a"},
		{"claims without jwt", Options{Callers: []Config{{Name: "bot", Claims: map[string]string{"sub": "x"}, Allow: []string{"*"}}}}, "callers.bot.jwt_claims", "jwks_file"},
		{"same claims", Options{JWT: jwtOK, Callers: []Config{{Name: "a", Claims: map[string]string{"sub": "x"}, Allow: []string{"*"}}, {Name: "b", Claims: map[string]string{"sub": "x"}, Allow: []string{"*"}}}}, "callers.b.jwt_claims", "caller a"},
		{"bad name", Options{Callers: []Config{{Name: "a b", Tokens: []string{tokOps}, Allow: []string{"*"}}}}, "callers.a b", "name"},
		{"no issuer", Options{JWT: &JWTOptions{Keys: testKeys(t, nil), Audience: "x"}, Callers: []Config{{Name: "a", Tokens: []string{tokOps}, Allow: []string{"*"}}}}, "jwt.issuer", "missing"},
		{"no audience", Options{JWT: &JWTOptions{Keys: testKeys(t, nil), Issuer: "x"}, Callers: []Config{{Name: "a", Tokens: []string{tokOps}, Allow: []string{"*"}}}}, "jwt.audience", "missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.opts)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("New = %v, want a *ConfigError", err)
			}
			if ce.Path() != tc.wantPath || !strings.Contains(ce.Reason, tc.wantText) {
				t.Errorf("New = %q at %q, want %q at %q", ce.Reason, ce.Path(), tc.wantText, tc.wantPath)
			}
		})
	}
}

// testKeys returns a JWKS of key's public half (a new P-256 key when
// nil), with kid "k1".
func testKeys(t *testing.T, key *ecdsa.PrivateKey) *jose.JSONWebKeySet {
	t.Helper()
	if key == nil {
		key = newKey(t)
	}
	js, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := ParseKeys(js)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// sign returns a JWT of claims signed by key under kid.
func sign(t testing.TB, key any, alg jose.SignatureAlgorithm, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestAuthenticate(t *testing.T) {
	key, other := newKey(t), newKey(t)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	set, err := New(Options{
		JWT: &JWTOptions{Keys: testKeys(t, key), Issuer: "https://id.example", Audience: "toolscout"},
		Now: func() time.Time { return now },
		Callers: []Config{
			{Name: "ops", Tokens: []string{tokOps, "ops-token-rotated-0123456789"}, Allow: []string{"memory"}},
			{Name: "bot", Claims: map[string]string{"sub": "bot-1"}, Allow: []string{"everything"}},
			{Name: "team", Claims: map[string]string{"groups": "team-a"}, Allow: []string{"everything"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	claims := func(over map[string]any) map[string]any {
		c := map[string]any{"iss": "https://id.example", "aud": "toolscout", "sub": "bot-1", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
		for k, v := range over {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	tests := []struct {
		name  string
		token string
		want  string // the caller, "" for refused
	}{
		{"token", tokOps, "ops"},
		{"rotated token", "ops-token-rotated-0123456789", "ops"},
		{"unknown token", "ops-token-0123456789abcdeX", ""},
		{"empty", "", ""},
		{"jwt", sign(t, key, jose.ES256, "k1", claims(nil)), "bot"},
		{"jwt, aud list", sign(t, key, jose.ES256, "k1", claims(map[string]any{"aud": []string{"other", "toolscout"}})), "bot"},
		{"jwt, group array", sign(t, key, jose.ES256, "k1", claims(map[string]any{"sub": "someone", "groups": []string{"x", "team-a"}})), "team"},
		{"jwt, one key, no kid", sign(t, key, jose.ES256, "", claims(nil)), "bot"},
		{"jwt, other key", sign(t, other, jose.ES256, "k1", claims(nil)), ""},
		{"jwt, unknown kid", sign(t, key, jose.ES256, "k2", claims(nil)), ""},
		{"jwt, expired", sign(t, key, jose.ES256, "k1", claims(map[string]any{"exp": now.Add(-time.Minute).Unix()})), ""},
		{"jwt, expired within leeway", sign(t, key, jose.ES256, "k1", claims(map[string]any{"exp": now.Add(-10 * time.Second).Unix()})), "bot"},
		{"jwt, no exp", sign(t, key, jose.ES256, "k1", claims(map[string]any{"exp": nil})), ""},
		{"jwt, not yet", sign(t, key, jose.ES256, "k1", claims(map[string]any{"nbf": now.Add(time.Hour).Unix()})), ""},
		{"jwt, wrong issuer", sign(t, key, jose.ES256, "k1", claims(map[string]any{"iss": "https://evil.example"})), ""},
		{"jwt, wrong audience", sign(t, key, jose.ES256, "k1", claims(map[string]any{"aud": "other"})), ""},
		{"jwt, no caller", sign(t, key, jose.ES256, "k1", claims(map[string]any{"sub": "nobody"})), ""},
		{"jwt, two callers", sign(t, key, jose.ES256, "k1", claims(map[string]any{"groups": []string{"team-a"}})), ""},
		{"jwt, HMAC", sign(t, []byte("0123456789abcdef0123456789abcdef"), jose.HS256, "k1", claims(nil)), ""},
		{"jwt, alg none", unsigned(claims(nil)), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := set.Authenticate(context.Background(), tc.token)
			got := ""
			if err == nil {
				got = id.Name
			} else if !errors.Is(err, ErrUnauthenticated) {
				t.Errorf("error %v does not wrap ErrUnauthenticated", err)
			}
			if got != tc.want {
				t.Errorf("Authenticate = %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

// unsigned returns a JWT with alg "none".
func unsigned(claims map[string]any) string {
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	c, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	return enc(h) + "." + enc(c) + "."
}

func TestParseKeysPEM(t *testing.T) {
	key := newKey(t)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	set, err := ParseKeys(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	if err != nil || len(set.Keys) != 1 {
		t.Fatalf("ParseKeys(PEM) = %v, %v", set, err)
	}
	priv, _ := x509.MarshalECPrivateKey(key)
	if _, err := ParseKeys(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: priv})); err == nil {
		t.Error("ParseKeys took a private key")
	}
	if _, err := ParseKeys([]byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)); err == nil {
		t.Error("ParseKeys took a symmetric key")
	}
	if _, err := ParseKeys([]byte(`{"keys":[]}`)); err == nil {
		t.Error("ParseKeys took an empty set")
	}
}

func TestRequire(t *testing.T) {
	set, err := New(Options{Callers: []Config{{Name: "ops", Tokens: []string{tokOps}, Allow: []string{"memory"}}}})
	if err != nil {
		t.Fatal(err)
	}
	h := set.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := FromContext(r.Context())
		ti := auth.TokenInfoFromContext(r.Context())
		if c == nil || ti == nil || ti.UserID != c.Name {
			t.Errorf("caller %v, token info %v", c, ti)
			return
		}
		w.Write([]byte(c.Name))
	}), nil)
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer nope-nope-nope-nope", 401}, {"Basic " + tokOps, 401}, {"Bearer " + tokOps, 200}, {"bearer  " + tokOps, 200}} {
		req := httptest.NewRequest("POST", "/mcp", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Authorization %q: status %d, want %d", tc.auth, rec.Code, tc.want)
		}
		if rec.Code == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("Authorization %q: 401 without a Bearer challenge", tc.auth)
		}
		if rec.Code == 200 && rec.Body.String() != "ops" {
			t.Errorf("Authorization %q: answered %q", tc.auth, rec.Body.String())
		}
	}
}
