package callers

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/sync/singleflight"
)

// IntrospectorOptions configures NewIntrospector.
type IntrospectorOptions struct {
	// Endpoint is the authorization server's introspection endpoint;
	// "" finds it in the metadata of Issuer on first use.
	Endpoint, Issuer string
	// ClientID and ClientSecret authenticate toolscout to the endpoint
	// (HTTP Basic, RFC 7662 section 2.1).
	ClientID, ClientSecret string
	// Client makes the requests (a client with a 10 s timeout when nil).
	Client *http.Client
	// CacheFor is how long an active token's answer is reused, at most
	// until the token expires (DefaultIntrospectionCache when zero).
	CacheFor time.Duration
	// InactiveCacheFor is how long a token the endpoint said is not
	// active is refused without asking again
	// (DefaultInactiveIntrospectionCache when zero).
	InactiveCacheFor time.Duration
	// MaxCached bounds the answers kept, active and inactive each
	// (DefaultMaxIntrospectionCached when zero).
	MaxCached int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Defaults of IntrospectorOptions.
const (
	DefaultIntrospectionCache         = 30 * time.Second
	DefaultInactiveIntrospectionCache = 10 * time.Second
	DefaultMaxIntrospectionCached     = 10000
	maxIntrospectionBytes             = 1 << 20
	// maxIntrospectionsInFlight bounds the requests to the endpoint at
	// once: a flood of made-up tokens waits here, not at the
	// authorization server.
	maxIntrospectionsInFlight = 8
)

// Introspector checks opaque access tokens by asking the authorization
// server (RFC 7662). Answers are cached by the token's SHA-256 (never
// the token): an active one for CacheFor at most and never past the
// token's exp, an inactive one for InactiveCacheFor, each kind within
// MaxCached (so that a flood of bad tokens neither asks the
// authorization server once per request nor pushes out the good
// tokens' answers). Requests for the same token at once share one
// question, and at most maxIntrospectionsInFlight are asked at a time.
type Introspector struct {
	o        IntrospectorOptions
	inFlight chan struct{}
	group    singleflight.Group

	mu       sync.Mutex
	endpoint string
	active   map[[sha256.Size]byte]introspected
	inactive map[[sha256.Size]byte]time.Time // until when
}

type introspected struct {
	claims map[string]any
	exp    time.Time
	until  time.Time
}

// NewIntrospector returns o's introspector; nothing is asked until a
// token comes.
func NewIntrospector(o IntrospectorOptions) *Introspector {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: defaultFetchTimeout}
	}
	if o.CacheFor <= 0 {
		o.CacheFor = DefaultIntrospectionCache
	}
	if o.InactiveCacheFor <= 0 {
		o.InactiveCacheFor = DefaultInactiveIntrospectionCache
	}
	if o.MaxCached <= 0 {
		o.MaxCached = DefaultMaxIntrospectionCached
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Introspector{o: o, endpoint: o.Endpoint, inFlight: make(chan struct{}, maxIntrospectionsInFlight),
		active: map[[sha256.Size]byte]introspected{}, inactive: map[[sha256.Size]byte]time.Time{}}
}

// errInactive is an introspection's answer for a token that is not
// active (expired, revoked, or never issued).
var errInactive = errors.New("the authorization server says the token is not active")

// introspection is one answer of the endpoint.
type introspection struct {
	claims map[string]any
	exp    time.Time
}

// introspect returns the claims of an active token and its expiry (zero
// when the answer gives none), from the cache or the endpoint.
func (in *Introspector) introspect(ctx context.Context, token string) (map[string]any, time.Time, error) {
	h := sha256.Sum256([]byte(token))
	now := in.o.Now()
	in.mu.Lock()
	if c, ok := in.active[h]; ok && now.Before(c.until) {
		in.mu.Unlock()
		return c.claims, c.exp, nil
	}
	if until, ok := in.inactive[h]; ok && now.Before(until) {
		in.mu.Unlock()
		return nil, time.Time{}, errInactive
	}
	in.mu.Unlock()
	// The key is the hash: the group keeps its keys while a question is
	// asked.
	v, err, _ := in.group.Do(string(h[:]), func() (any, error) {
		// Asked again: a question for the same token may have been
		// answered since the look above.
		now := in.o.Now()
		in.mu.Lock()
		if c, ok := in.active[h]; ok && now.Before(c.until) {
			in.mu.Unlock()
			return introspection{claims: c.claims, exp: c.exp}, nil
		}
		if until, ok := in.inactive[h]; ok && now.Before(until) {
			in.mu.Unlock()
			return introspection{}, errInactive
		}
		in.mu.Unlock()
		// Shared by every request waiting for it: one that goes away
		// does not fail the others (ask bounds it in time).
		a, err := in.ask(context.WithoutCancel(ctx), token)
		now = in.o.Now()
		switch {
		case errors.Is(err, errInactive):
			in.mu.Lock()
			evict(in.inactive, in.o.MaxCached, func(until time.Time) bool { return !now.Before(until) })
			in.inactive[h] = now.Add(in.o.InactiveCacheFor)
			in.mu.Unlock()
		case err == nil:
			until := now.Add(in.o.CacheFor)
			if !a.exp.IsZero() && a.exp.Before(until) {
				until = a.exp
			}
			in.mu.Lock()
			evict(in.active, in.o.MaxCached, func(c introspected) bool { return !now.Before(c.until) })
			in.active[h] = introspected{claims: a.claims, exp: a.exp, until: until}
			in.mu.Unlock()
		}
		return a, err
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	a := v.(introspection)
	return a.claims, a.exp, nil
}

// evict makes room for one more entry in m, which holds at most max:
// the stale ones go first, then any.
func evict[V any](m map[[sha256.Size]byte]V, max int, stale func(V) bool) {
	if len(m) < max {
		return
	}
	for k, v := range m {
		if stale(v) {
			delete(m, k)
		}
	}
	for k := range m {
		if len(m) < max {
			break
		}
		delete(m, k)
	}
}

// ask asks the endpoint about token (at most maxIntrospectionsInFlight
// at a time); an inactive token's answer is errInactive. Nothing it
// returns holds the token.
func (in *Introspector) ask(ctx context.Context, token string) (introspection, error) {
	ctx, cancel := context.WithTimeout(ctx, defaultFetchTimeout)
	defer cancel()
	select {
	case in.inFlight <- struct{}{}:
		defer func() { <-in.inFlight }()
	case <-ctx.Done():
		return introspection{}, fmt.Errorf("introspection: %d questions to the authorization server are waiting for answers: %w", maxIntrospectionsInFlight, ctx.Err())
	}
	in.mu.Lock()
	endpoint := in.endpoint
	in.mu.Unlock()
	if endpoint == "" {
		asm, err := auth.GetAuthServerMetadata(ctx, in.o.Issuer, in.o.Client)
		if err != nil {
			return introspection{}, fmt.Errorf("the metadata of issuer %s: %v", in.o.Issuer, err)
		}
		if asm == nil || asm.IntrospectionEndpoint == "" {
			return introspection{}, fmt.Errorf("issuer %s names no introspection_endpoint in its metadata: give toolscout.oauth.introspection.endpoint", in.o.Issuer)
		}
		endpoint = asm.IntrospectionEndpoint
		in.mu.Lock()
		in.endpoint = endpoint
		in.mu.Unlock()
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return introspection{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.o.ClientID), url.QueryEscape(in.o.ClientSecret))
	res, err := in.o.Client.Do(req)
	if err != nil {
		// The URL is the endpoint's; the token went in the body.
		return introspection{}, fmt.Errorf("introspection: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return introspection{}, fmt.Errorf("introspection at %s: %s (check toolscout.oauth.introspection's client_id and client_secret_file)", endpoint, res.Status)
	}
	var claims map[string]any
	dec := json.NewDecoder(io.LimitReader(res.Body, maxIntrospectionBytes))
	dec.UseNumber()
	if err := dec.Decode(&claims); err != nil {
		return introspection{}, fmt.Errorf("introspection at %s: the answer is no JSON object: %v", endpoint, err)
	}
	if active, _ := claims["active"].(bool); !active {
		return introspection{}, errInactive
	}
	var exp time.Time
	if n, ok := claims["exp"].(json.Number); ok {
		if secs, err := n.Int64(); err == nil {
			exp = time.Unix(secs, 0)
		}
	}
	return introspection{claims: claims, exp: exp}, nil
}

// verifyOpaque checks a token that is not a JWT by introspection: active,
// issued by Issuer (when the answer says), for Resource, unexpired.
func (v *oauthVerifier) verifyOpaque(ctx context.Context, token string, now time.Time) (tokenGrant, error) {
	claims, exp, err := v.o.Introspect.introspect(ctx, token)
	if err != nil {
		return tokenGrant{}, err
	}
	if iss, ok := claims["iss"].(string); ok && iss != v.o.Issuer {
		return tokenGrant{}, fmt.Errorf("issued by %q, not by %q", iss, v.o.Issuer)
	}
	var aud []string
	switch a := claims["aud"].(type) {
	case string:
		aud = []string{a}
	case []any:
		for _, e := range a {
			if s, ok := e.(string); ok {
				aud = append(aud, s)
			}
		}
	}
	if !oauthex.MatchesResource(aud, v.o.Resource) {
		return tokenGrant{}, fmt.Errorf("for audience %q, not for this server (%s): the introspection answer must name it in aud", aud, v.o.Resource)
	}
	if !exp.IsZero() && now.After(exp.Add(v.o.Leeway)) {
		return tokenGrant{}, errors.New("expired")
	}
	return v.grant(claims, exp)
}
