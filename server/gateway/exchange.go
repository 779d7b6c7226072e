package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"
)

// Per-caller identity by token exchange (issue 45, item 1; RFC 8693):
// an upstream whose CallerIdentity is IdentityExchange runs each
// caller's tool calls, as IdentityForward does, on a session of the
// caller's own, but sends the upstream a token of its own audience: the
// caller's token exchanged at the upstream's authorization server
// (grant_type urn:ietf:params:oauth:grant-type:token-exchange, the
// caller's token as subject_token, the upstream's resource as resource
// and audience), toolscout authenticating there as its registered
// client. The go-sdk's oauthex.ExchangeToken makes the request.
//
// Exchanged tokens are kept by a digest of the caller's token until
// shortly before they expire, at most maxCallerSessions per upstream
// (the least recently used goes first); one exchange at a time per
// caller's token (singleflight). The session's transport asks for the
// token on each request, so a token that expires mid-session is
// exchanged again, and a 401 to an exchanged token is re-exchanged
// once. A refused exchange is the call's error: never a fallback to
// toolscout's own identity.

// IdentityExchange is the CallerIdentity that exchanges the caller's
// token at the upstream's authorization server (RFC 8693) for one
// issued to the upstream, and sends that.
const IdentityExchange = "exchange"

// Exchange configures the token exchange of an upstream whose
// CallerIdentity is IdentityExchange.
type Exchange struct {
	// ClientID and ClientSecret are the client registered for toolscout
	// at the upstream's authorization server, sent with each exchange
	// (client_secret_post).
	ClientID, ClientSecret string
	// Scopes are asked for ("": none named, the server's default).
	Scopes []string
	// TokenEndpoint is the authorization server's token endpoint (""
	// : found from the upstream's protected resource metadata, RFC
	// 9728, and its authorization server's metadata, RFC 8414).
	TokenEndpoint string
	// Client makes the discovery and exchange requests (nil: a client
	// with a 30 s timeout).
	Client *http.Client
}

// ErrExchange is wrapped by the error of a call whose caller's token
// could not be exchanged for one of the upstream's.
var ErrExchange = errors.New("the caller's token could not be exchanged")

const (
	// exchangeTimeout bounds one discovery or exchange.
	exchangeTimeout = 30 * time.Second
	// exchangeBefore is how long before its expiry an exchanged token
	// is exchanged anew.
	exchangeBefore = 30 * time.Second
	// tokenTypeAccess is RFC 8693's type of an OAuth access token: the
	// caller's token (subject_token_type), and the token asked for.
	tokenTypeAccess = "urn:ietf:params:oauth:token-type:access_token"
)

// exchangeCache is one upstream's exchanged tokens, by digest of the
// caller's token.
type exchangeCache struct {
	mu     sync.Mutex
	tokens map[[32]byte]*exchangedToken
	target *exchangeTarget // found once
	flight singleflight.Group
	max    int // maxCallerSessions unless a test sets it
}

// exchangedToken is a caller's token exchanged, until expiry.
type exchangedToken struct {
	token  string
	expiry time.Time
	used   time.Time
}

// exchangeTarget is where and for what tokens are exchanged.
type exchangeTarget struct{ endpoint, resource string }

// get returns key's exchanged token unless it is stale (the one the
// upstream refused) or expires within exchangeBefore.
func (xc *exchangeCache) get(key [32]byte, stale string) (string, bool) {
	xc.mu.Lock()
	defer xc.mu.Unlock()
	t := xc.tokens[key]
	if t == nil || t.token == stale || time.Until(t.expiry) < exchangeBefore {
		return "", false
	}
	t.used = time.Now()
	return t.token, true
}

// put keeps key's exchanged token, making room by dropping the expired
// and then the least recently used.
func (xc *exchangeCache) put(key [32]byte, t *exchangedToken) {
	xc.mu.Lock()
	defer xc.mu.Unlock()
	if xc.tokens == nil {
		xc.tokens = map[[32]byte]*exchangedToken{}
	}
	limit := xc.max
	if limit <= 0 {
		limit = maxCallerSessions
	}
	now := time.Now()
	for k, old := range xc.tokens {
		if len(xc.tokens) < limit {
			break
		}
		if k != key && now.After(old.expiry) {
			delete(xc.tokens, k)
		}
	}
	for len(xc.tokens) >= limit && xc.tokens[key] == nil {
		var oldest [32]byte
		var victim *exchangedToken
		for k, old := range xc.tokens {
			if victim == nil || old.used.Before(victim.used) {
				oldest, victim = k, old
			}
		}
		delete(xc.tokens, oldest)
	}
	t.used = now
	xc.tokens[key] = t
}

// count returns how many exchanged tokens are kept.
func (xc *exchangeCache) count() int {
	xc.mu.Lock()
	defer xc.mu.Unlock()
	return len(xc.tokens)
}

// clear forgets every exchanged token (the gateway closes).
func (xc *exchangeCache) clear() {
	xc.mu.Lock()
	defer xc.mu.Unlock()
	xc.tokens = nil
}

// exchangeError is a caller's token that could not be exchanged: its
// message is worded for the agent, and quotes no token.
type exchangeError struct{ err error }

func (e *exchangeError) Error() string { return e.err.Error() }
func (e *exchangeError) Unwrap() error { return e.err }

// callerExchange is the TokenSource of a caller's session on an
// upstream of IdentityExchange: the caller's token, exchanged.
type callerExchange struct {
	p   callerPath
	tok string
}

var _ TokenSource = callerExchange{}

func (x callerExchange) Token(ctx context.Context) (string, error) {
	return x.p.exchange(ctx, x.tok, "")
}

func (x callerExchange) Refresh(ctx context.Context, stale string) (string, error) {
	return x.p.exchange(ctx, x.tok, stale)
}

// refusedAgain words the upstream's refusal of a token just exchanged
// anew after it refused the one before (headerTransport).
func (x callerExchange) refusedAgain(re *refusedError) error {
	return &exchangeError{fmt.Errorf("%w: server %q refused the token its authorization server issued for this caller (%v), twice, a fresh one too: the authorization server issues tokens the server does not accept (another audience or issuer, or scopes it needs that auth.scopes does not ask for)", ErrExchange, x.p.u.cfg.Domain, re)}
}

// exchange returns the token to send for the caller whose token is tok:
// the one kept unless it is stale (refused by the upstream) or expiring,
// else one exchanged now, one exchange at a time per caller's token.
func (p callerPath) exchange(ctx context.Context, tok, stale string) (string, error) {
	xc := &p.u.callers.exchanged
	key := sha256.Sum256([]byte(tok))
	if t, ok := xc.get(key, stale); ok {
		return t, nil
	}
	ch := xc.flight.DoChan(hex.EncodeToString(key[:]), func() (any, error) {
		if t, ok := xc.get(key, stale); ok {
			return t, nil // exchanged by the flight just ended
		}
		// Not the first asker's to cancel: the others wait for it too.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exchangeTimeout)
		defer cancel()
		return p.exchangeNow(ctx, key, tok)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// exchangeNow exchanges tok at the authorization server and keeps the
// token it issues under key.
func (p callerPath) exchangeNow(ctx context.Context, key [32]byte, tok string) (string, error) {
	c := &p.u.cfg
	x := c.Exchange
	if x == nil || x.ClientID == "" {
		return "", &exchangeError{fmt.Errorf("%w: server %q acts with each caller's identity by token exchange (auth.mode \"exchange\") and has no client registered for toolscout at its authorization server: set auth.client_id and auth.client_secret_file", ErrExchange, c.Domain)}
	}
	target, err := p.exchangeTarget(ctx)
	if err != nil {
		return "", err
	}
	creds := &oauthex.ClientCredentials{ClientID: x.ClientID}
	if x.ClientSecret != "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: x.ClientSecret}
	}
	t, err := oauthex.ExchangeToken(ctx, target.endpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: tokenTypeAccess,
		Audience:           target.resource,
		Resource:           target.resource,
		Scope:              x.Scopes,
		SubjectToken:       tok,
		SubjectTokenType:   tokenTypeAccess,
	}, creds, exchangeClient(x))
	if err != nil {
		return "", exchangeRefused(c.Domain, target.endpoint, err)
	}
	if typ, _ := t.Extra("issued_token_type").(string); typ != tokenTypeAccess || t.AccessToken == "" {
		return "", &exchangeError{fmt.Errorf("%w: server %q: its authorization server answered the token exchange with a token of type %.80q, not an access token (%s)", ErrExchange, c.Domain, typ, tokenTypeAccess)}
	}
	expiry := t.Expiry
	if expiry.IsZero() {
		// No expires_in: kept as long as an idle session is, then
		// exchanged again.
		expiry = time.Now().Add(callerIdle)
	}
	p.u.callers.exchanged.put(key, &exchangedToken{token: t.AccessToken, expiry: expiry})
	return t.AccessToken, nil
}

// exchangeClient is the HTTP client of x's requests.
func exchangeClient(x *Exchange) *http.Client {
	if x.Client != nil {
		return x.Client
	}
	return &http.Client{Timeout: exchangeTimeout}
}

// exchangeRefused words the failed exchange at endpoint for domain's
// caller: the authorization server's OAuth error code and what to
// configure, never its free text (it may echo the subject token).
func exchangeRefused(domain, endpoint string, err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		if errors.Is(err, context.DeadlineExceeded) {
			return &exchangeError{fmt.Errorf("%w: server %q: its authorization server's token endpoint %s did not answer the token exchange within %s", ErrExchange, domain, endpoint, exchangeTimeout)}
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			return &exchangeError{fmt.Errorf("%w: server %q: cannot reach its authorization server's token endpoint %s (%v)", ErrExchange, domain, endpoint, ue.Err)}
		}
		return &exchangeError{fmt.Errorf("%w: server %q: %v", ErrExchange, domain, err)}
	}
	status, code := 0, ""
	if re.Response != nil {
		status = re.Response.StatusCode
	}
	if errorCode(re.ErrorCode) && len(re.ErrorCode) <= 64 {
		code = re.ErrorCode
	}
	what := "see the authorization server's log for why"
	switch code {
	case "invalid_grant":
		what = "it does not take the caller's token as a subject token (expired, of an issuer it does not trust, or not to be exchanged): the caller signs in again, or the authorization server is configured to accept the tokens of toolscout's callers' identity provider"
	case "invalid_target":
		what = "it issues no token for the server's resource (audience) to toolscout's client: allow that audience for auth.client_id there"
	case "unauthorized_client":
		what = "toolscout's client (auth.client_id) may not use the token-exchange grant (urn:ietf:params:oauth:grant-type:token-exchange): allow it for that client there"
	case "invalid_client":
		what = "it did not authenticate toolscout's client: check auth.client_id and the secret in auth.client_secret_file"
	case "invalid_scope":
		what = "it does not grant the scopes asked for: correct auth.scopes"
	case "unsupported_grant_type":
		what = "it does not offer token exchange (RFC 8693): use \"mode\": \"forward\", or auth.token_endpoint of one that does"
	case "invalid_request":
		what = "it found the exchange request malformed (a missing or unsupported parameter, such as the subject token type)"
	}
	if code != "" {
		code = ", " + code
	}
	return &exchangeError{fmt.Errorf("%w: server %q acts with each caller's identity by token exchange (auth.mode \"exchange\"), and its authorization server refused to exchange this caller's token (HTTP %d%s): %s; the call was not made, and never is with toolscout's own identity", ErrExchange, domain, status, code, what)}
}

// exchangeTarget returns the token endpoint and the resource to
// exchange for, found once: the resource from the upstream's protected
// resource metadata (RFC 9728; the server's URL when it has none), the
// endpoint configured or from its authorization server's metadata (RFC
// 8414). A failure is not kept: the next call looks again.
func (p callerPath) exchangeTarget(ctx context.Context) (exchangeTarget, error) {
	xc := &p.u.callers.exchanged
	xc.mu.Lock()
	if xc.target != nil {
		t := *xc.target
		xc.mu.Unlock()
		return t, nil
	}
	xc.mu.Unlock()
	c := &p.u.cfg
	client := exchangeClient(c.Exchange)
	t := exchangeTarget{endpoint: c.Exchange.TokenEndpoint, resource: c.URL}
	prm := resourceMetadata(ctx, client, c.URL)
	if prm != nil {
		t.resource = prm.Resource
	}
	if t.endpoint == "" {
		if prm == nil || len(prm.AuthorizationServers) == 0 {
			return t, &exchangeError{fmt.Errorf("%w: server %q publishes no protected resource metadata (RFC 9728) naming its authorization server, where its callers' tokens are exchanged: set auth.token_endpoint", ErrExchange, c.Domain)}
		}
		issuer := prm.AuthorizationServers[0]
		asm, err := auth.GetAuthServerMetadata(ctx, issuer, client)
		switch {
		case err != nil:
			return t, &exchangeError{fmt.Errorf("%w: server %q: the metadata of its authorization server %s cannot be used (%v): set auth.token_endpoint", ErrExchange, c.Domain, issuer, err)}
		case asm == nil || asm.TokenEndpoint == "":
			return t, &exchangeError{fmt.Errorf("%w: server %q: its authorization server %s publishes no metadata (RFC 8414) with a token endpoint: set auth.token_endpoint", ErrExchange, c.Domain, issuer)}
		}
		t.endpoint = asm.TokenEndpoint
	}
	xc.mu.Lock()
	xc.target = &t
	xc.mu.Unlock()
	return t, nil
}

// resourceMetadata fetches the protected resource metadata of the
// server at serverURL where RFC 9728 and the MCP specification put it
// (under the path of its endpoint, then at the root), nil when there is
// none it can use.
func resourceMetadata(ctx context.Context, client *http.Client, serverURL string) *oauthex.ProtectedResourceMetadata {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil
	}
	type candidate struct{ meta, resource string }
	var cands []candidate
	if p := strings.Trim(u.Path, "/"); p != "" {
		m := *u
		m.Path, m.RawQuery, m.Fragment = "/.well-known/oauth-protected-resource/"+p, "", ""
		cands = append(cands, candidate{m.String(), serverURL})
	}
	m, root := *u, *u
	m.Path, m.RawQuery, m.Fragment = "/.well-known/oauth-protected-resource", "", ""
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	cands = append(cands, candidate{m.String(), root.String()})
	for _, c := range cands {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.meta, c.resource, client)
		if err == nil && prm != nil {
			return prm
		}
	}
	return nil
}
