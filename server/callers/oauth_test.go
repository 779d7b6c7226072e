package callers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// jwksServer publishes the public halves of keys (by kid) at /jwks,
// counting the fetches; body, when set, is served instead.
type jwksServer struct {
	*httptest.Server
	mu   sync.Mutex
	keys map[string]*ecdsa.PrivateKey
	body string
	hits atomic.Int64
}

func newJWKSServer(t *testing.T) *jwksServer {
	s := &jwksServer{keys: map[string]*ecdsa.PrivateKey{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if s.body != "" {
			w.Write([]byte(s.body))
			return
		}
		var set jose.JSONWebKeySet
		for kid, k := range s.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"})
		}
		json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(kid string, key *ecdsa.PrivateKey, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key != nil {
		s.keys[kid] = key
	}
	s.body = body
}

// TestRemoteKeys: the key set is fetched once, again for an unknown key
// id only after MinRefresh, again when older than MaxAge; a fetch that
// fails (an answer too large, not a key set) keeps the last good set.
func TestRemoteKeys(t *testing.T) {
	srv := newJWKSServer(t)
	k1, k2 := newKey(t), newKey(t)
	srv.set("k1", k1, "")
	now := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	rk := NewRemoteKeys(RemoteKeysOptions{URL: srv.URL + "/jwks", MinRefresh: 10 * time.Second, MaxAge: time.Hour, MaxBytes: 4096, Now: func() time.Time { return now }})
	ctx := context.Background()
	keyset := func(refresh bool) *jose.JSONWebKeySet {
		t.Helper()
		set, err := rk.KeySet(ctx, refresh)
		if err != nil {
			t.Fatalf("KeySet(%v): %v", refresh, err)
		}
		return set
	}
	steps := []struct {
		name     string
		advance  time.Duration
		refresh  bool
		setup    func()
		wantHits int64
		wantKids []string
	}{
		{"first use fetches", 0, false, nil, 1, []string{"k1"}},
		{"cached", time.Second, false, nil, 1, []string{"k1"}},
		{"unknown kid within MinRefresh: not fetched", time.Second, true, func() { srv.set("k2", k2, "") }, 1, []string{"k1"}},
		{"unknown kid after MinRefresh: fetched", 10 * time.Second, true, nil, 2, []string{"k1", "k2"}},
		{"too large: last good kept", 2 * time.Hour, false, func() { srv.set("", nil, `{"keys": [`+strings.Repeat(" ", 5000)+`]}`) }, 3, []string{"k1", "k2"}},
		{"not a key set: last good kept", 11 * time.Second, true, func() { srv.set("", nil, `{"keys": []}`) }, 4, []string{"k1", "k2"}},
		{"fixed: fetched again after MinRefresh", 11 * time.Second, true, func() { srv.set("", nil, "") }, 5, []string{"k1", "k2"}},
	}
	for _, st := range steps {
		now = now.Add(st.advance)
		if st.setup != nil {
			st.setup()
		}
		set := keyset(st.refresh)
		waitIdle(t, rk)
		if got := srv.hits.Load(); got != st.wantHits {
			t.Errorf("%s: %d fetches, want %d", st.name, got, st.wantHits)
		}
		for _, kid := range st.wantKids {
			if len(set.Key(kid)) == 0 {
				t.Errorf("%s: no key %s in the set", st.name, kid)
			}
		}
	}
	if _, _, _, err := rk.Status(); err != nil {
		t.Errorf("Status after a good fetch: %v", err)
	}

	// A set that is only old is fetched again in the background: a token
	// of a known key does not wait for a slow issuer.
	slow := make(chan struct{})
	var entered atomic.Int64
	k := newKey(t)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if entered.Add(1) > 1 {
			select {
			case <-slow:
			case <-r.Context().Done():
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Algorithm: "ES256"}}})
	}))
	t.Cleanup(hang.Close)
	later := now
	old := NewRemoteKeys(RemoteKeysOptions{URL: hang.URL, MaxAge: time.Hour, Now: func() time.Time { return later }})
	if _, err := old.KeySet(ctx, false); err != nil {
		t.Fatal(err)
	}
	later = later.Add(2 * time.Hour)
	if set, err := old.KeySet(ctx, false); err != nil || len(set.Key("k1")) == 0 {
		t.Fatalf("an old set while the issuer is slow: %v, %v", set, err)
	}
	old.mu.Lock()
	underWay := old.running != nil
	old.mu.Unlock()
	if !underWay {
		t.Error("the old set was returned after its fetch ended: a token of a known key waited for the issuer")
	}
	close(slow)
	waitIdle(t, old)

	// Without any good set, the error is returned.
	bad := newJWKSServer(t)
	bad.set("", nil, `{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}`)
	if _, err := NewRemoteKeys(RemoteKeysOptions{URL: bad.URL}).KeySet(ctx, false); err == nil || !strings.Contains(err.Error(), "public signing key") {
		t.Errorf("a symmetric key set: %v, want an error naming it", err)
	}
}

// TestOAuthAuthenticate: access tokens as JWTs against an issuer's key
// set found through its metadata: issuer, audience (the resource, a
// trailing slash aside), expiry and scopes checked, a key rotated in
// found by its kid, read-only scopes marked.
func TestOAuthAuthenticate(t *testing.T) {
	keys := newJWKSServer(t)
	k1, k2 := newKey(t), newKey(t)
	keys.set("k1", k1, "")
	var issuer string
	mux := http.NewServeMux()
	idp := httptest.NewServer(mux)
	t.Cleanup(idp.Close)
	issuer = idp.URL + "/realms/acme"
	mux.HandleFunc("/.well-known/oauth-authorization-server/realms/acme", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": issuer, "authorization_endpoint": issuer + "/auth", "token_endpoint": issuer + "/token",
			"jwks_uri": keys.URL + "/jwks", "code_challenge_methods_supported": []string{"S256"}, "response_types_supported": []string{"code"}})
	})
	const resource = "https://toolscout.example/mcp"
	now := time.Now()
	set, err := New(Options{
		OAuth: &OAuthOptions{Issuer: issuer, Resource: resource, Scopes: []string{"tools.read", "tools.run"}, ReadScopes: []string{"tools.read"},
			Keys: NewRemoteKeys(RemoteKeysOptions{Issuer: issuer, MinRefresh: time.Nanosecond, Client: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}})},
		Callers: []Config{
			{Name: "alice", Claims: map[string]string{"sub": "alice"}, Allow: []string{"*"}},
			{Name: "ops", Tokens: []string{tokOps}, Allow: []string{"*"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	claims := func(over map[string]any) map[string]any {
		c := map[string]any{"iss": issuer, "sub": "alice", "aud": resource, "scope": "tools.read tools.run", "exp": now.Add(time.Hour).Unix()}
		for k, v := range over {
			c[k] = v
		}
		return c
	}
	tests := []struct {
		name     string
		token    string
		caller   string // "" : refused
		readOnly bool
		why      string
		scopeErr bool
	}{
		{"valid", sign(t, k1, jose.ES256, "k1", claims(nil)), "alice", false, "", false},
		{"audience with a trailing slash", sign(t, k1, jose.ES256, "k1", claims(map[string]any{"aud": []string{"x", resource + "/"}})), "alice", false, "", false},
		{"read scope only", sign(t, k1, jose.ES256, "k1", claims(map[string]any{"scope": "tools.read"})), "alice", true, "", false},
		{"scp array", sign(t, k1, jose.ES256, "k1", claims(map[string]any{"scope": nil, "scp": []string{"tools.run"}})), "alice", false, "", false},
		{"static token beside", tokOps, "ops", false, "", false},
		{"another audience", sign(t, k1, jose.ES256, "k1", claims(map[string]any{"aud": "https://other.example/mcp"})), "", false, "for audience", false},
		{"a longer path", sign(t, k1, jose.ES256, "k1", claims(map[string]any{"aud": resource + "/x"})), "", false, "for audience", false},
		{"another issuer", sign(t, k1, jose.ES256, "k1", claims(map[string]any{"iss": "https://evil.example"})), "", false, "issued by", false},
		{"expired", sign(t, k1, jose.ES256, "k1", claims(map[string]any{"exp": now.Add(-time.Hour).Unix()})), "", false, "expired", false},
		{"no exp", sign(t, k1, jose.ES256, "k1", claims(map[string]any{"exp": nil})), "", false, "exp", false},
		{"no scope of ours", sign(t, k1, jose.ES256, "k1", claims(map[string]any{"scope": "email profile"})), "", false, "none of the scopes", true},
		{"unknown key", sign(t, k2, jose.ES256, "k9", claims(nil)), "", false, `no key "k9"`, false},
		{"wrong key under a known kid", sign(t, k2, jose.ES256, "k1", claims(nil)), "", false, "JWT", false},
		{"claims name no caller", sign(t, k1, jose.ES256, "k1", claims(map[string]any{"sub": "mallory"})), "", false, "name no caller", false},
		{"opaque without introspection", "opaque-token-0123456789", "", false, "none of the callers' tokens", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := set.Authenticate(context.Background(), tc.token)
			if tc.caller == "" {
				if err == nil || !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), tc.why) {
					t.Fatalf("Authenticate = %v, %v; want refused saying %q", id.Caller, err, tc.why)
				}
				if errors.Is(err, ErrInsufficientScope) != tc.scopeErr {
					t.Errorf("errors.Is(%v, ErrInsufficientScope) = %v, want %v", err, !tc.scopeErr, tc.scopeErr)
				}
				if strings.Contains(err.Error(), tc.token) {
					t.Errorf("the error holds the token: %v", err)
				}
				return
			}
			if err != nil || id.Name != tc.caller || id.ReadOnly != tc.readOnly {
				t.Fatalf("Authenticate = %+v, %v; want %s, read-only %v", id, err, tc.caller, tc.readOnly)
			}
		})
	}

	// The issuer rotates to k2: a token of k2 makes the set fetched again.
	keys.set("k2", k2, "")
	if id, err := set.Authenticate(context.Background(), sign(t, k2, jose.ES256, "k2", claims(nil))); err != nil || id.Name != "alice" {
		t.Errorf("a token of a key rotated in: %v, %v", id.Caller, err)
	}

	// The metadata and the challenge.
	md := set.ProtectedResourceMetadata()
	if md.Resource != resource || md.AuthorizationServers[0] != issuer || strings.Join(md.ScopesSupported, " ") != "tools.read tools.run" {
		t.Errorf("metadata = %+v", md)
	}
	if got := set.MetadataPaths(); strings.Join(got, " ") != "/.well-known/oauth-protected-resource/mcp /.well-known/oauth-protected-resource" {
		t.Errorf("MetadataPaths = %q", got)
	}
	rec := httptest.NewRecorder()
	set.Require(http.NotFoundHandler(), nil).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	want := `Bearer resource_metadata="https://toolscout.example/.well-known/oauth-protected-resource/mcp", scope="tools.read tools.run"`
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") != want {
		t.Errorf("no token: %d %q, want 401 %q", rec.Code, rec.Header().Get("WWW-Authenticate"), want)
	}
}

// TestIntrospection: opaque tokens checked by RFC 7662 introspection with
// toolscout's client credentials: active and for the resource only;
// an active answer is reused, an inactive one not.
func TestIntrospection(t *testing.T) {
	const resource = "https://toolscout.example/mcp"
	answers := map[string]map[string]any{
		"good-token-0123456789":     {"active": true, "sub": "alice", "aud": resource, "scope": "tools.run", "exp": time.Now().Add(time.Hour).Unix()},
		"readonly-token-0123456789": {"active": true, "sub": "alice", "aud": []string{resource}, "scope": "tools.read"},
		"revoked-token-0123456789":  {"active": false},
		"other-aud-token-012345":    {"active": true, "sub": "alice", "aud": "https://other.example", "scope": "tools.run"},
		"no-aud-token-0123456789":   {"active": true, "sub": "alice", "scope": "tools.run"},
		"expired-token-0123456789":  {"active": true, "sub": "alice", "aud": resource, "scope": "tools.run", "exp": time.Now().Add(-time.Hour).Unix()},
	}
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if id, secret, ok := r.BasicAuth(); !ok || id != "toolscout" || secret != "s3cret" {
			http.Error(w, "bad client", http.StatusUnauthorized)
			return
		}
		r.ParseForm()
		a, ok := answers[r.PostForm.Get("token")]
		if !ok {
			a = map[string]any{"active": false}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(srv.Close)
	set, err := New(Options{
		OAuth: &OAuthOptions{Issuer: "https://id.example", Resource: resource, Scopes: []string{"tools.read", "tools.run"}, ReadScopes: []string{"tools.read"},
			Keys:       StaticKeys{testKeys(t, nil)},
			Introspect: NewIntrospector(IntrospectorOptions{Endpoint: srv.URL, ClientID: "toolscout", ClientSecret: "s3cret"})},
		Callers: []Config{{Name: "alice", Claims: map[string]string{"sub": "alice"}, Allow: []string{"*"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		token    string
		ok       bool
		readOnly bool
		why      string
	}{
		{"good-token-0123456789", true, false, ""},
		{"readonly-token-0123456789", true, true, ""},
		{"revoked-token-0123456789", false, false, "not active"},
		{"other-aud-token-012345", false, false, "for audience"},
		{"no-aud-token-0123456789", false, false, "for audience"},
		{"expired-token-0123456789", false, false, "expired"},
		{"never-issued-0123456789", false, false, "not active"},
	}
	for _, tc := range tests {
		id, err := set.Authenticate(context.Background(), tc.token)
		if tc.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.why) || tc.ok && (id.Name != "alice" || id.ReadOnly != tc.readOnly) {
			t.Errorf("Authenticate(%s) = %+v, %v; want ok %v, read-only %v, error saying %q", tc.token, id, err, tc.ok, tc.readOnly, tc.why)
		}
		if err != nil && strings.Contains(err.Error(), tc.token) {
			t.Errorf("the error holds the token: %v", err)
		}
	}
	before := calls.Load()
	set.Authenticate(context.Background(), "good-token-0123456789")
	set.Authenticate(context.Background(), "revoked-token-0123456789")
	if got := calls.Load() - before; got != 0 {
		t.Errorf("%d introspections for a cached active token and a cached inactive one, want 0", got)
	}
}

// TestReplace: Replace swaps the credentials at once; a caller whose
// definition stays is the same *Caller (the server's views are kept),
// one whose lists changed is a new one.
func TestReplace(t *testing.T) {
	opts := func(opsTok string, filesAllow string) Options {
		return Options{Callers: []Config{
			{Name: "ops", Tokens: []string{opsTok}, Allow: []string{"memory"}},
			{Name: "files", Tokens: []string{"files-token-0123456789"}, Allow: []string{filesAllow}},
		}}
	}
	set, err := New(opts(tokOps, "filesystem"))
	if err != nil {
		t.Fatal(err)
	}
	ops, files := set.Caller("ops"), set.Caller("files")
	next, err := New(opts("ops-rotated-token-0123456789", "filesystem__read_*"))
	if err != nil {
		t.Fatal(err)
	}
	set.Replace(next)
	if _, err := set.Authenticate(context.Background(), tokOps); err == nil {
		t.Error("the old token still works after Replace")
	}
	id, err := set.Authenticate(context.Background(), "ops-rotated-token-0123456789")
	if err != nil || id.Caller != ops {
		t.Errorf("the new token: %v, %v; want the same *Caller as before", id.Caller, err)
	}
	if set.Caller("files") == files || set.Caller("files").Visible("filesystem", "write_file") {
		t.Error("files' allow changed: want a new *Caller with the new lists")
	}
}

// waitIdle waits for rk's fetch under way, if any, to end.
func waitIdle(t *testing.T, rk *RemoteKeys) {
	t.Helper()
	rk.mu.Lock()
	done := rk.running
	rk.mu.Unlock()
	if done != nil {
		<-done
	}
}

// BenchmarkAuthenticate: what naming the caller costs per request, for
// a static token, a JWT of toolscout.jwt and an OAuth access token (the
// issuer's keys cached).
func BenchmarkAuthenticate(b *testing.B) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	js, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256"}}})
	keys, err := ParseKeys(js)
	if err != nil {
		b.Fatal(err)
	}
	const resource = "https://toolscout.example/mcp"
	exp := time.Now().Add(time.Hour).Unix()
	callersOf := []Config{{Name: "ops", Tokens: []string{tokOps}, Allow: []string{"*"}}, {Name: "alice", Claims: map[string]string{"sub": "alice"}, Allow: []string{"*"}}}
	jwtSet, err := New(Options{JWT: &JWTOptions{Keys: keys, Issuer: "https://id.example", Audience: "toolscout"}, Callers: callersOf})
	if err != nil {
		b.Fatal(err)
	}
	oauthSet, err := New(Options{OAuth: &OAuthOptions{Issuer: "https://id.example", Resource: resource, Scopes: []string{"tools.read", "tools.run"}, Keys: StaticKeys{keys}}, Callers: callersOf})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		set   *Set
		token string
	}{
		{"static", jwtSet, tokOps},
		{"jwt", jwtSet, sign(b, key, jose.ES256, "k1", map[string]any{"iss": "https://id.example", "aud": "toolscout", "sub": "alice", "exp": exp})},
		{"oauth", oauthSet, sign(b, key, jose.ES256, "k1", map[string]any{"iss": "https://id.example", "aud": resource, "sub": "alice", "scope": "tools.run", "exp": exp})},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.set.Authenticate(context.Background(), c.token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
