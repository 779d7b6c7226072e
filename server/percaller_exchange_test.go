package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/gateway"
)

const (
	exchangeClientID     = "toolscout-exchanger"
	exchangeClientSecret = "exchanger-secret-0123456789abcdef"
	tokenTypeAccess      = "urn:ietf:params:oauth:token-type:access_token"
	grantTokenExchange   = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// exchangeAS is an OAuth authorization server (RFC 8414 metadata, an
// RFC 8693 token endpoint): it authenticates its one client, takes as
// subject tokens the tokens of users (token → user: the identity
// provider toolscout's callers sign in with), and issues short-lived
// access tokens bound to the resource asked for. A subject token it does
// not know is refused (invalid_grant), its answer echoing it (as some
// servers do: toolscout must not quote it).
type exchangeAS struct {
	url string

	mu        sync.Mutex
	issued    map[string]issuedToken // token → who and for what
	exchanges map[string]int         // by user
	wire      []string               // every token the endpoint answered with, for the leak search
}

type issuedToken struct{ user, resource string }

func startExchangeAS(t *testing.T, users map[string]string) *exchangeAS {
	t.Helper()
	as := &exchangeAS{issued: map[string]issuedToken{}, exchanges: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                as.url,
			"authorization_endpoint":                as.url + "/authorize",
			"token_endpoint":                        as.url + "/token",
			"jwks_uri":                              as.url + "/jwks",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", grantTokenExchange},
			"token_endpoint_auth_methods_supported": []string{"client_secret_post", "client_secret_basic"},
			"code_challenge_methods_supported":      []string{"S256"},
		})
	})
	oauthError := func(w http.ResponseWriter, status int, code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
		}
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			oauthError(w, http.StatusBadRequest, "invalid_request", "not a form")
			return
		}
		id, secret, basic := r.BasicAuth()
		if !basic {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		f := r.PostForm
		switch {
		case id != exchangeClientID || secret != exchangeClientSecret:
			oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		case f.Get("grant_type") != grantTokenExchange:
			oauthError(w, http.StatusBadRequest, "unsupported_grant_type", f.Get("grant_type"))
		case f.Get("subject_token_type") != tokenTypeAccess || f.Get("requested_token_type") != "" && f.Get("requested_token_type") != tokenTypeAccess:
			oauthError(w, http.StatusBadRequest, "invalid_request", "unsupported token type")
		case users[f.Get("subject_token")] == "":
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown subject token "+f.Get("subject_token"))
		case f.Get("resource") == "" || f.Get("audience") != "" && f.Get("audience") != f.Get("resource"):
			oauthError(w, http.StatusBadRequest, "invalid_target", "no resource")
		default:
			user := users[f.Get("subject_token")]
			b := make([]byte, 16)
			rand.Read(b)
			tok := "xchg-" + user + "-" + hex.EncodeToString(b)
			as.mu.Lock()
			as.issued[tok] = issuedToken{user: user, resource: f.Get("resource")}
			as.exchanges[user]++
			as.wire = append(as.wire, tok)
			as.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "issued_token_type": tokenTypeAccess, "token_type": "Bearer", "expires_in": 120})
		}
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	as.url = hs.URL
	return as
}

// revoke makes the authorization server forget user's tokens (the
// upstream then refuses them).
func (as *exchangeAS) revoke(user string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	for tok, it := range as.issued {
		if it.user == user {
			delete(as.issued, tok)
		}
	}
}

func (as *exchangeAS) counts() string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return fmt.Sprint(as.exchanges)
}

// startExchangeUpstream is a remote MCP server (go-sdk, Streamable HTTP,
// at /mcp) behind a bearer check: it accepts toolscout's own token (its
// listing) and the tokens as issued for its own resource, nothing else
// (not the callers' own tokens); its protected resource metadata names
// as's issuer (unless metadata is false: then it has none). whoami
// answers the user the token was issued for.
func startExchangeUpstream(t *testing.T, as *exchangeAS, metadata bool) string {
	t.Helper()
	var resource string
	who := func(h http.Header) string {
		tok, _ := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
		if tok == ownUpToken {
			return "toolscout"
		}
		as.mu.Lock()
		defer as.mu.Unlock()
		if it, ok := as.issued[tok]; ok && it.resource == resource {
			return it.user
		}
		return ""
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "identity", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "whoami", Description: "Say which user the request is made as.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are " + who(req.Extra.Header)}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		if !metadata {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": resource, "authorization_servers": []string{as.url}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if who(r.Header) == "" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+strings.TrimSuffix(resource, "/mcp")+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "unknown token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	resource = hs.URL + "/mcp"
	return resource
}

// callerJWTs are JWTs of the identity provider toolscout's callers
// sign in with (toolscout.jwt): for alice, bob and mallory (whom the
// authorization server does not know), and the provider's keys.
func callerJWTs(t *testing.T) (*jose.JSONWebKeySet, map[string]string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	toks := map[string]string{}
	for _, user := range []string{"alice", "bob", "mallory"} {
		tok, err := jwt.Signed(sig).Claims(map[string]any{"iss": "https://id.example", "aud": "toolscout", "sub": user,
			"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		toks[user] = tok
	}
	return &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}}, toks
}

// exchangeGateway serves the exchange upstream through toolscout over
// HTTP (callers alice, bob and mallory signing in with the JWTs of
// keys' provider), in exp's mode; x is the upstream's exchange config.
func exchangeGateway(t *testing.T, upURL string, keys *jose.JSONWebKeySet, x *gateway.Exchange, exp Exposure) (string, *logBuffer, *Metrics) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := store.Open("")
	if err != nil {
		t.Fatal(err)
	}
	live, _, err := search.Open(ctx, search.LiveOptions{Store: st, Embedder: embed.NewBuiltin(embed.BuiltinOptions{})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	gw := gateway.New(gateway.Options{
		Upstreams:     []gateway.UpstreamConfig{{Domain: "id", URL: upURL, Transport: "http", Auth: staticToken(ownUpToken), CallerIdentity: gateway.IdentityExchange, Exchange: x}},
		Logger:        logs.logger(),
		Redactor:      redact.New(ownUpToken, exchangeClientSecret),
		WordFrequency: search.WordFrequency,
	})
	live.Follow(ctx, gw, search.FollowOptions{})
	set, err := callers.New(callers.Options{
		Callers: []callers.Config{
			{Name: "alice", Claims: map[string]string{"sub": "alice"}, Allow: []string{"*"}},
			{Name: "bob", Claims: map[string]string{"sub": "bob"}, Allow: []string{"*"}},
			{Name: "mallory", Claims: map[string]string{"sub": "mallory"}, Allow: []string{"*"}},
		},
		JWT: &callers.JWTOptions{Keys: keys, Issuer: "https://id.example", Audience: "toolscout"},
	})
	if err != nil {
		t.Fatal(err)
	}
	metrics := NewMetrics()
	opts := Options{Live: live, Executor: gw, Callers: set, Metrics: metrics, Logger: logs.logger(), Expose: exp}
	if exp.Mode == ExposeCode {
		opts.Code = &Code{Runner: codeRunner(t)}
	}
	srv := New(opts)
	gw.Start(ctx)
	t.Cleanup(func() { gw.Close(); live.Close() })
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	waitFor(t, "the exchange server's tools", func() bool { return srv.eng.Catalog().Tool("id__whoami") != nil })
	return hs.URL, logs, metrics
}

// leaks fails t for each secret found in out.
func leaks(t *testing.T, out string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(out, s) {
			t.Errorf("secret %.10s… appears in an answer, an error, the log or /metrics", s)
		}
	}
}

// TestCallerIdentityExchange: with identity "caller" and mode
// "exchange", each caller's call reaches the upstream with a token the
// authorization server issued for that caller and the upstream's
// resource (found by discovery: protected resource metadata, then the
// authorization server's metadata), exchanged once per caller and kept;
// the upstream never sees a caller's own token (it would refuse it). A
// caller whose token the authorization server will not exchange gets a
// clear error naming the server and what to configure, and its call is
// not made as toolscout. A token the upstream stops accepting is
// exchanged again, once. No token (the callers', the exchanged ones,
// toolscout's) nor the client secret appears in any answer, log line or
// /metrics.
func TestCallerIdentityExchange(t *testing.T) {
	keys, jwts := callerJWTs(t)
	as := startExchangeAS(t, map[string]string{jwts["alice"]: "alice", jwts["bob"]: "bob"})
	upURL := startExchangeUpstream(t, as, true)
	url, logs, metrics := exchangeGateway(t, upURL, keys, &gateway.Exchange{ClientID: exchangeClientID, ClientSecret: exchangeClientSecret}, Exposure{Mode: ExposeMeta})
	var out strings.Builder
	for _, tc := range []struct{ token, want string }{{jwts["alice"], "you are alice"}, {jwts["bob"], "you are bob"}, {jwts["alice"], "you are alice"}} {
		got, isErr := whoami(t, url, tc.token)
		out.WriteString(got)
		if isErr || got != tc.want {
			t.Errorf("whoami as %.5s: %q (error %v), want %q", tc.token, got, isErr, tc.want)
		}
	}
	if got := as.counts(); got != "map[alice:1 bob:1]" {
		t.Errorf("exchanges by user: %s, want one each of alice and bob (the exchanged token kept across calls)", got)
	}

	got, isErr := whoami(t, url, jwts["mallory"])
	out.WriteString(got)
	for _, want := range []string{`server "id"`, "refused to exchange", "invalid_grant", "never is with toolscout's own identity"} {
		if !isErr || !strings.Contains(got, want) {
			t.Errorf("whoami as mallory: %q (error %v), want a refusal containing %q", got, isErr, want)
		}
	}
	if strings.Contains(got, "you are") {
		t.Errorf("whoami as mallory ran: %q", got)
	}

	// The upstream stops accepting alice's exchanged token: her next
	// call is exchanged again, once, and goes through.
	as.revoke("alice")
	got, isErr = whoami(t, url, jwts["alice"])
	out.WriteString(got)
	if isErr || got != "you are alice" {
		t.Errorf("whoami as alice after her token was revoked: %q (error %v), want %q", got, isErr, "you are alice")
	}
	if got := as.counts(); got != "map[alice:2 bob:1]" {
		t.Errorf("exchanges by user after a revocation: %s, want alice exchanged again once", got)
	}

	scrape := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(scrape, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(scrape.Result().Body)
	out.Write(body)
	logs.mu.Lock()
	out.Write(logs.buf.Bytes())
	logs.mu.Unlock()
	as.mu.Lock()
	wire := append([]string(nil), as.wire...)
	as.mu.Unlock()
	leaks(t, out.String(), append(wire, jwts["alice"], jwts["bob"], jwts["mallory"], ownUpToken, exchangeClientSecret)...)
}

// TestCallerIdentityExchangeRefused: an authorization server that does
// not authenticate toolscout's client is every caller's clear error,
// naming the server and the keys to check, without the secret; an
// upstream with no metadata to find its authorization server by is one
// that says to set auth.token_endpoint.
func TestCallerIdentityExchangeRefused(t *testing.T) {
	keys, jwts := callerJWTs(t)
	as := startExchangeAS(t, map[string]string{jwts["alice"]: "alice", jwts["bob"]: "bob"})
	upURL := startExchangeUpstream(t, as, true)
	t.Run("wrong secret", func(t *testing.T) {
		url, logs, _ := exchangeGateway(t, upURL, keys, &gateway.Exchange{ClientID: exchangeClientID, ClientSecret: "not-the-secret-0123456789"}, Exposure{Mode: ExposeMeta})
		got, isErr := whoami(t, url, jwts["alice"])
		if !isErr || !strings.Contains(got, `server "id"`) || !strings.Contains(got, "invalid_client") || !strings.Contains(got, "auth.client_secret_file") {
			t.Errorf("whoami with a wrong client secret: %q (error %v), want a refusal naming the server, invalid_client and the secret's key", got, isErr)
		}
		logs.mu.Lock()
		defer logs.mu.Unlock()
		leaks(t, got+logs.buf.String(), jwts["alice"], "not-the-secret-0123456789")
	})
	t.Run("no metadata", func(t *testing.T) {
		// A server of no protected resource metadata: the exchange
		// cannot find where to go unless the config says.
		bare := startExchangeUpstream(t, as, false)
		url, _, _ := exchangeGateway(t, bare, keys, &gateway.Exchange{ClientID: exchangeClientID, ClientSecret: exchangeClientSecret}, Exposure{Mode: ExposeMeta})
		got, isErr := whoami(t, url, jwts["alice"])
		if !isErr || !strings.Contains(got, `server "id"`) || !strings.Contains(got, "auth.token_endpoint") {
			t.Errorf("whoami where no metadata names the authorization server: %q (error %v), want a refusal that says to set auth.token_endpoint", got, isErr)
		}
		if as.counts() != "map[]" {
			t.Errorf("exchanges made: %s, want none", as.counts())
		}
		// The token endpoint configured: exchanged for the server's URL.
		url, _, _ = exchangeGateway(t, bare, keys, &gateway.Exchange{ClientID: exchangeClientID, ClientSecret: exchangeClientSecret, TokenEndpoint: as.url + "/token"}, Exposure{Mode: ExposeMeta})
		if got, isErr := whoami(t, url, jwts["alice"]); isErr || got != "you are alice" {
			t.Errorf("whoami with auth.token_endpoint: %q (error %v), want %q", got, isErr, "you are alice")
		}
	})
}
