package callers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// OAuthOptions makes toolscout an OAuth 2.1 protected resource, as the
// MCP authorization specification asks of an HTTP server: it publishes
// its protected resource metadata (RFC 9728) naming Issuer, answers 401
// with a WWW-Authenticate challenge that points at it, and takes the
// access tokens Issuer grants for Resource (RFC 8707), checked as JWTs
// against the issuer's keys or, for opaque tokens, by introspection
// (RFC 7662).
type OAuthOptions struct {
	// Issuer is the authorization server's issuer identifier: the JWT's
	// "iss" must be it.
	Issuer string
	// Resource is toolscout's canonical URL as clients reach it
	// ("https://toolscout.example/mcp"): the token's audience must be
	// it, so that a token granted for another server is refused.
	Resource string
	// Scopes are the scopes toolscout's metadata names; a token must
	// hold one of them (none configured: any token of the issuer for
	// Resource).
	Scopes []string
	// ReadScopes are those of Scopes that let a caller search, describe
	// and run only the tools that say they are read-only (readOnlyHint):
	// a token holding none of the other Scopes is read-only.
	ReadScopes []string
	// Keys gives the issuer's public keys (RemoteKeys).
	Keys KeySource
	// Introspect, when set, checks the tokens that are not JWTs.
	Introspect *Introspector
	// Leeway is the clock skew allowed on a token's times
	// (DefaultLeeway when zero).
	Leeway time.Duration
}

// KeySource gives an issuer's public keys. With refresh, the caller met
// a key id the set it has does not hold: the source may fetch the set
// again (as often as it allows itself).
type KeySource interface {
	KeySet(ctx context.Context, refresh bool) (*jose.JSONWebKeySet, error)
}

// ErrInsufficientScope is wrapped by Authenticate's error for a valid
// token that holds none of the scopes toolscout asks for: the answer is
// 403 with error="insufficient_scope" (so that a client may ask for
// more), not 401.
var ErrInsufficientScope = errors.New("the token holds none of the scopes toolscout asks for")

type oauthVerifier struct {
	o          OAuthOptions
	runScopes  []string // Scopes less ReadScopes
	metadataAt string   // the metadata's URL
}

func newOAuthVerifier(o OAuthOptions) (*oauthVerifier, error) {
	bad := func(key, reason string) error { return &ConfigError{Key: "oauth." + key, Reason: reason} }
	if err := checkHTTPURL(o.Issuer); err != nil {
		return nil, bad("issuer", fmt.Sprintf("%v: give the authorization server's issuer (\"https://id.example/realms/acme\"), as its metadata names it", err))
	}
	if err := checkHTTPURL(o.Resource); err != nil {
		return nil, bad("resource", fmt.Sprintf("%v: give toolscout's URL as clients reach it (\"https://toolscout.example/mcp\")", err))
	}
	if u, _ := url.Parse(o.Resource); u.RawQuery != "" || u.Fragment != "" {
		return nil, bad("resource", "has a query or fragment: a resource identifier has neither (RFC 8707)")
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			return nil, bad(fmt.Sprintf("scopes[%d]", i), fmt.Sprintf("%q: a scope is one word without quotes or backslashes", s))
		}
	}
	for i, s := range o.ReadScopes {
		if !slices.Contains(o.Scopes, s) {
			return nil, bad(fmt.Sprintf("read_scopes[%d]", i), fmt.Sprintf("%q is not one of scopes %v", s, o.Scopes))
		}
	}
	if o.Keys == nil {
		return nil, bad("jwks_url", "no keys to check tokens with")
	}
	if o.Leeway <= 0 {
		o.Leeway = DefaultLeeway
	}
	v := &oauthVerifier{o: o, metadataAt: MetadataURL(o.Resource)}
	for _, s := range o.Scopes {
		if !slices.Contains(o.ReadScopes, s) {
			v.runScopes = append(v.runScopes, s)
		}
	}
	return v, nil
}

// checkHTTPURL checks that s is an absolute http(s) URL with a host.
func checkHTTPURL(s string) error {
	if s == "" {
		return errors.New("missing")
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	return nil
}

// MetadataURL is where the protected resource metadata of resource is
// served: the well-known path inserted between the host and resource's
// path (RFC 9728 section 3.1).
func MetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	u.Path = "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u.String()
}

// tokenGrant is what a checked access token says.
type tokenGrant struct {
	claims   map[string]any
	expires  time.Time
	scopes   []string
	readOnly bool
}

// verifyJWT checks an access token that is a JWT: signed by a key of the
// issuer's set (by "kid", the set fetched again when the kid is not in
// it), issued by Issuer, for Resource, unexpired.
func (v *oauthVerifier) verifyJWT(ctx context.Context, raw string, now time.Time) (tokenGrant, error) {
	tok, err := jwt.ParseSigned(raw, signatureAlgorithms)
	if err != nil {
		return tokenGrant{}, err
	}
	kid := ""
	if len(tok.Headers) > 0 {
		kid = tok.Headers[0].KeyID
	}
	set, err := v.o.Keys.KeySet(ctx, false)
	if err == nil && !hasKey(set, kid) {
		set, err = v.o.Keys.KeySet(ctx, true)
	}
	if err != nil {
		return tokenGrant{}, fmt.Errorf("the issuer's keys: %w", err)
	}
	var key any = set
	if kid == "" {
		if len(set.Keys) != 1 {
			return tokenGrant{}, fmt.Errorf("the JWT names no key (kid) and the issuer has %d", len(set.Keys))
		}
		key = set.Keys[0].Key
	} else if !hasKey(set, kid) {
		return tokenGrant{}, fmt.Errorf("no key %q in the issuer's key set", kid)
	}
	var std jwt.Claims
	var all map[string]any
	if err := tok.Claims(key, &std, &all); err != nil {
		return tokenGrant{}, err
	}
	if std.Expiry == nil {
		return tokenGrant{}, errors.New(`no "exp": toolscout accepts tokens that expire`)
	}
	if std.Issuer != v.o.Issuer {
		return tokenGrant{}, fmt.Errorf("issued by %q, not by %q", std.Issuer, v.o.Issuer)
	}
	if !oauthex.MatchesResource(std.Audience, v.o.Resource) {
		return tokenGrant{}, fmt.Errorf("for audience %q, not for this server (%s)", []string(std.Audience), v.o.Resource)
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Time: now}, v.o.Leeway); err != nil {
		return tokenGrant{}, err
	}
	return v.grant(all, std.Expiry.Time())
}

// hasKey reports whether set holds a key with id kid ("" : any key).
func hasKey(set *jose.JSONWebKeySet, kid string) bool {
	if set == nil {
		return false
	}
	if kid == "" {
		return len(set.Keys) > 0
	}
	return len(set.Key(kid)) > 0
}

// grant reads the scopes of a checked token's claims and decides what
// they allow.
func (v *oauthVerifier) grant(claims map[string]any, exp time.Time) (tokenGrant, error) {
	g := tokenGrant{claims: claims, expires: exp, scopes: tokenScopes(claims)}
	if len(v.o.Scopes) == 0 {
		return g, nil
	}
	run := slices.ContainsFunc(v.runScopes, func(s string) bool { return slices.Contains(g.scopes, s) })
	read := slices.ContainsFunc(v.o.ReadScopes, func(s string) bool { return slices.Contains(g.scopes, s) })
	if !run && !read {
		return tokenGrant{}, fmt.Errorf("%w (it holds %q; toolscout asks for one of %q)", ErrInsufficientScope, g.scopes, v.o.Scopes)
	}
	g.readOnly = !run
	return g, nil
}

// tokenScopes reads a token's scopes: "scope", a space-separated string
// (RFC 9068, RFC 7662), or "scp", an array or a string (as some issuers
// write it).
func tokenScopes(claims map[string]any) []string {
	var out []string
	for _, k := range []string{"scope", "scp"} {
		switch s := claims[k].(type) {
		case string:
			out = append(out, strings.Fields(s)...)
		case []any:
			for _, e := range s {
				if str, ok := e.(string); ok {
					out = append(out, str)
				}
			}
		}
	}
	return out
}

// challenge is the WWW-Authenticate value of a refusal: the metadata's
// URL, the scopes, and the error code when a token was sent.
func (v *oauthVerifier) challenge(code string) string {
	params := []string{fmt.Sprintf("resource_metadata=%q", v.metadataAt)}
	if len(v.o.Scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(v.o.Scopes, " ")))
	}
	if code != "" {
		params = append(params, fmt.Sprintf("error=%q", code))
	}
	return "Bearer " + strings.Join(params, ", ")
}

// ProtectedResourceMetadata is what toolscout publishes of itself as an
// OAuth protected resource (RFC 9728), nil without OAuthOptions.
func (s *Set) ProtectedResourceMetadata() *oauthex.ProtectedResourceMetadata {
	v := s.state().oauth
	if v == nil {
		return nil
	}
	return &oauthex.ProtectedResourceMetadata{
		Resource:               v.o.Resource,
		AuthorizationServers:   []string{v.o.Issuer},
		ScopesSupported:        slices.Clone(v.o.Scopes),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "toolscout",
	}
}

// RunChallenge is the WWW-Authenticate value of a 403 that refuses a
// request made with a read-only token (ReadOnly) to run a tool that does
// not say it is read-only: error="insufficient_scope", the scopes that
// satisfy it (the scopes that run tools, with the scopes of toolscout's
// the token already holds, so that a client that asks for exactly
// these keeps what it had), the protected resource metadata, and
// description (printable ASCII without quotes or backslashes) as error_description,
// as the MCP authorization specification's scope challenge asks. ok is
// false when the request of ctx came without a read-only OAuth access
// token of this Set's (a static token, a token that runs tools).
func (s *Set) RunChallenge(ctx context.Context, description string) (challenge string, scopes []string, ok bool) {
	v := s.state().oauth
	id, found := ctx.Value(identityKey{}).(Identity)
	if v == nil || !found || !id.ReadOnly || len(v.runScopes) == 0 {
		return "", nil, false
	}
	for _, sc := range v.o.Scopes {
		if slices.Contains(v.runScopes, sc) || slices.Contains(id.Scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	clean := strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < ' ' || r > '~' {
			return -1
		}
		return r
	}, description)
	challenge = fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata=%q, error_description="%s"`,
		strings.Join(scopes, " "), v.metadataAt, clean)
	return challenge, scopes, true
}
