package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/toolscout/toolscout/internal/exchangetest"
	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/gateway"
)

const (
	exchangeClientID     = "toolscout-exchanger"
	exchangeClientSecret = "exchanger-secret-0123456789abcdef"
)

// startExchangeAS and startExchangeUpstream are exchangetest's, with
// this file's client and toolscout's own token.
func startExchangeAS(t *testing.T, users map[string]string) *exchangetest.AS {
	return exchangetest.StartAS(t, exchangeClientID, exchangeClientSecret, users)
}

func startExchangeUpstream(t *testing.T, as *exchangetest.AS, metadata bool) string {
	return exchangetest.StartUpstream(t, as, ownUpToken, metadata)
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
	for _, user := range []string{"alice", "bob", "mallory", exchangetest.Forbidden} {
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
func exchangeGateway(t *testing.T, upURL string, keys *jose.JSONWebKeySet, x *gateway.Exchange, exp Exposure) (string, *servedLog, *Metrics) {
	t.Helper()
	set, err := callers.New(callers.Options{
		Callers: []callers.Config{
			{Name: "alice", Claims: map[string]string{"sub": "alice"}, Allow: []string{"*"}},
			{Name: "bob", Claims: map[string]string{"sub": "bob"}, Allow: []string{"*"}},
			{Name: "mallory", Claims: map[string]string{"sub": "mallory"}, Allow: []string{"*"}},
			{Name: "forbidden", Claims: map[string]string{"sub": exchangetest.Forbidden}, Allow: []string{"*"}},
		},
		JWT: &callers.JWTOptions{Keys: keys, Issuer: "https://id.example", Audience: "toolscout"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return serveOneUpstream(t, gateway.UpstreamConfig{Domain: "id", URL: upURL, Transport: "http", Auth: staticToken(ownUpToken), CallerIdentity: gateway.IdentityExchange, Exchange: x}, set,
		func(o *Options) {
			o.Expose = exp
			if exp.Mode == ExposeCode {
				o.Code = &Code{Runner: codeRunner(t)}
			}
		}, ownUpToken, exchangeClientSecret)
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
	t.Parallel()
	keys, jwts := callerJWTs(t)
	as := startExchangeAS(t, map[string]string{jwts["alice"]: "alice", jwts["bob"]: "bob", jwts[exchangetest.Forbidden]: exchangetest.Forbidden})
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
	if got := as.Counts(); got != "map[alice:1 bob:1]" {
		t.Errorf("exchanges by user: %s, want one each of alice and bob (the exchanged token kept across calls)", got)
	}

	// The server refuses the exchanged token of a user without the
	// grant it needs (403): said as the exchanged token's refusal.
	got, isErr := whoami(t, url, jwts[exchangetest.Forbidden])
	out.WriteString(got)
	if !isErr || !strings.Contains(got, `server "id" refused the token its authorization server issued for this caller (HTTP 403`) || !strings.Contains(got, "auth.scopes") {
		t.Errorf("whoami as a user the server forbids: %q (error %v), want the refusal of the exchanged token, with auth.scopes", got, isErr)
	}

	got, isErr = whoami(t, url, jwts["mallory"])
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
	as.Revoke("alice")
	got, isErr = whoami(t, url, jwts["alice"])
	out.WriteString(got)
	if isErr || got != "you are alice" {
		t.Errorf("whoami as alice after her token was revoked: %q (error %v), want %q", got, isErr, "you are alice")
	}
	if got := as.Counts(); got != "map[alice:2 bob:1 forbidden:1]" {
		t.Errorf("exchanges by user after a revocation: %s, want alice exchanged again once", got)
	}

	scrape := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(scrape, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(scrape.Result().Body)
	out.Write(body)
	out.WriteString(logs.final())
	leaks(t, out.String(), append(as.Issued(), jwts["alice"], jwts["bob"], jwts["mallory"], jwts[exchangetest.Forbidden], ownUpToken, exchangeClientSecret)...)
}

// TestCallerIdentityExchangeRefused: an authorization server that does
// not authenticate toolscout's client is every caller's clear error,
// naming the server and the keys to check, without the secret; an
// upstream with no metadata to find its authorization server by is one
// that says to set auth.token_endpoint.
func TestCallerIdentityExchangeRefused(t *testing.T) {
	t.Parallel()
	keys, jwts := callerJWTs(t)
	as := startExchangeAS(t, map[string]string{jwts["alice"]: "alice", jwts["bob"]: "bob"})
	upURL := startExchangeUpstream(t, as, true)
	t.Run("wrong secret", func(t *testing.T) {
		url, logs, _ := exchangeGateway(t, upURL, keys, &gateway.Exchange{ClientID: exchangeClientID, ClientSecret: "not-the-secret-0123456789"}, Exposure{Mode: ExposeMeta})
		got, isErr := whoami(t, url, jwts["alice"])
		if !isErr || !strings.Contains(got, `server "id"`) || !strings.Contains(got, "invalid_client") || !strings.Contains(got, "auth.client_secret_file") {
			t.Errorf("whoami with a wrong client secret: %q (error %v), want a refusal naming the server, invalid_client and the secret's key", got, isErr)
		}
		leaks(t, got+logs.final(), jwts["alice"], "not-the-secret-0123456789")
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
		if as.Counts() != "map[]" {
			t.Errorf("exchanges made: %s, want none", as.Counts())
		}
		// The token endpoint configured: exchanged for the server's URL.
		url, _, _ = exchangeGateway(t, bare, keys, &gateway.Exchange{ClientID: exchangeClientID, ClientSecret: exchangeClientSecret, TokenEndpoint: as.URL + "/token"}, Exposure{Mode: ExposeMeta})
		if got, isErr := whoami(t, url, jwts["alice"]); isErr || got != "you are alice" {
			t.Errorf("whoami with auth.token_endpoint: %q (error %v), want %q", got, isErr, "you are alice")
		}
	})
}
