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
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Defaults of IntrospectorOptions.
const (
	DefaultIntrospectionCache = 30 * time.Second
	maxIntrospectionBytes     = 1 << 20
	maxIntrospectionCached    = 10000
)

// Introspector checks opaque access tokens by asking the authorization
// server (RFC 7662). Active answers are cached by the token's SHA-256
// (never the token), for CacheFor at most and within a bounded count;
// inactive ones are not cached.
type Introspector struct {
	o IntrospectorOptions

	mu       sync.Mutex
	endpoint string
	cache    map[[sha256.Size]byte]introspected
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
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Introspector{o: o, endpoint: o.Endpoint, cache: map[[sha256.Size]byte]introspected{}}
}

// errInactive is an introspection's answer for a token that is not
// active (expired, revoked, or never issued).
var errInactive = errors.New("the authorization server says the token is not active")

// introspect returns the claims of an active token and its expiry (zero
// when the answer gives none).
func (in *Introspector) introspect(ctx context.Context, token string) (map[string]any, time.Time, error) {
	h := sha256.Sum256([]byte(token))
	now := in.o.Now()
	in.mu.Lock()
	if c, ok := in.cache[h]; ok && now.Before(c.until) {
		in.mu.Unlock()
		return c.claims, c.exp, nil
	}
	endpoint := in.endpoint
	in.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, defaultFetchTimeout)
	defer cancel()
	if endpoint == "" {
		asm, err := auth.GetAuthServerMetadata(ctx, in.o.Issuer, in.o.Client)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("the metadata of issuer %s: %v", in.o.Issuer, err)
		}
		if asm == nil || asm.IntrospectionEndpoint == "" {
			return nil, time.Time{}, fmt.Errorf("issuer %s names no introspection_endpoint in its metadata: give toolscout.oauth.introspection.endpoint", in.o.Issuer)
		}
		endpoint = asm.IntrospectionEndpoint
		in.mu.Lock()
		in.endpoint = endpoint
		in.mu.Unlock()
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.o.ClientID), url.QueryEscape(in.o.ClientSecret))
	res, err := in.o.Client.Do(req)
	if err != nil {
		// The URL is the endpoint's; the token went in the body.
		return nil, time.Time{}, fmt.Errorf("introspection: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, time.Time{}, fmt.Errorf("introspection at %s: %s (check toolscout.oauth.introspection's client_id and client_secret_file)", endpoint, res.Status)
	}
	var claims map[string]any
	dec := json.NewDecoder(io.LimitReader(res.Body, maxIntrospectionBytes))
	dec.UseNumber()
	if err := dec.Decode(&claims); err != nil {
		return nil, time.Time{}, fmt.Errorf("introspection at %s: the answer is no JSON object: %v", endpoint, err)
	}
	if active, _ := claims["active"].(bool); !active {
		return nil, time.Time{}, errInactive
	}
	var exp time.Time
	if n, ok := claims["exp"].(json.Number); ok {
		if secs, err := n.Int64(); err == nil {
			exp = time.Unix(secs, 0)
		}
	}
	until := now.Add(in.o.CacheFor)
	if !exp.IsZero() && exp.Before(until) {
		until = exp
	}
	in.mu.Lock()
	if len(in.cache) >= maxIntrospectionCached {
		for k, c := range in.cache {
			if !now.Before(c.until) || len(in.cache) >= maxIntrospectionCached {
				delete(in.cache, k)
			}
		}
	}
	in.cache[h] = introspected{claims: claims, exp: exp, until: until}
	in.mu.Unlock()
	return claims, exp, nil
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
