package callers

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// ErrUnauthenticated is wrapped by Authenticate's errors: the credential
// names no caller.
var ErrUnauthenticated = errors.New("no caller has this credential")

// ConfigError is a bad caller definition: the caller, the key (within
// the caller's entry, or within the jwt section when Caller is "") and
// what is wrong.
type ConfigError struct {
	Caller, Key, Reason string
}

// Path is where the error is in the config: "callers.ops.allow[1]" or
// "jwt.issuer".
func (e *ConfigError) Path() string {
	if e.Caller == "" && e.Key == "" {
		return "callers"
	}
	if e.Caller == "" && (e.Key == "oauth" || strings.HasPrefix(e.Key, "oauth.")) {
		return e.Key
	}
	if e.Caller == "" {
		return "jwt." + e.Key
	}
	p := "callers." + e.Caller
	if e.Key != "" {
		p += "." + e.Key
	}
	return p
}

func (e *ConfigError) Error() string { return e.Path() + ": " + e.Reason }

// Config defines one caller as cmd read it from the config: the tokens
// of its token files (read, trimmed), the JWT claims that name it, and
// what it may see.
type Config struct {
	Name string
	// Tokens are the bearer tokens that identify the caller (several
	// while one is rotated out).
	Tokens []string
	// Claims, when set, identify the caller by a JWT whose claims have
	// these values (a string claim equal to it, or an array claim that
	// holds it); every one must match.
	Claims      map[string]string
	Allow, Deny []string
}

// MinTokenLen is the shortest token a caller may have.
const MinTokenLen = 16

// Options configures New.
type Options struct {
	Callers []Config
	// JWT, when set, checks the JWTs that callers with Claims present.
	JWT *JWTOptions
	// OAuth, when set, makes toolscout an OAuth protected resource whose
	// access tokens' claims name the callers with Claims (instead of
	// JWT).
	OAuth *OAuthOptions
	// Now is the clock JWTs are checked against (time.Now when nil).
	Now func() time.Time
}

// Caller is one configured caller: its name and what it may see.
type Caller struct {
	Name   string
	policy *Policy
	claims map[string]string
	def    string // the definition, to keep the Caller when a reload leaves it as it was
}

// Visible reports whether the caller may see the tool (or prompt, or
// resource) name of domain; a nil Caller (no callers configured) sees
// everything.
func (c *Caller) Visible(domain, name string) bool {
	return c == nil || c.policy.Visible(domain, name)
}

// VisibleDomain is Policy.VisibleDomain for the caller; a nil Caller
// sees every domain.
func (c *Caller) VisibleDomain(domain string) bool {
	return c == nil || c.policy.VisibleDomain(domain)
}

// Unmatched is Policy.Unmatched for the caller.
func (c *Caller) Unmatched(tools []Tool, domains []string) []string {
	if c == nil {
		return nil
	}
	return c.policy.Unmatched(tools, domains)
}

// Set is the configured callers, and how a credential names one. It is
// safe for concurrent use; Replace swaps all of it for another Set's
// definitions at once (a token file, a key file or the callers block
// re-read), each request seeing the one or the other.
type Set struct {
	st atomic.Pointer[setState]
}

// setState is one generation of a Set's definitions: immutable.
type setState struct {
	byName  map[string]*Caller
	byToken map[[sha256.Size]byte]*Caller
	jwt     *jwtVerifier
	oauth   *oauthVerifier
	now     func() time.Time
}

func (s *Set) state() *setState { return s.st.Load() }

// Replace makes s answer with next's definitions from now on: requests
// already authenticated keep their caller. A caller whose definition
// (allow, deny, jwt_claims) is unchanged stays the same *Caller, so that
// the views the server made for it stay in use; only its credentials
// change.
func (s *Set) Replace(next *Set) {
	prev, st := s.state(), next.state()
	same := func(c *Caller) *Caller {
		if old := prev.byName[c.Name]; old != nil && old.def == c.def {
			return old
		}
		return c
	}
	// A copy of next's state: next itself stays as it was (it may be in
	// use).
	cp := *st
	cp.byName = make(map[string]*Caller, len(st.byName))
	for name, c := range st.byName {
		cp.byName[name] = same(c)
	}
	cp.byToken = make(map[[sha256.Size]byte]*Caller, len(st.byToken))
	for h, c := range st.byToken {
		cp.byToken[h] = same(c)
	}
	s.st.Store(&cp)
}

// definition is c's definition but its tokens, as one string.
func definition(c Config) string {
	claims := make([]string, 0, len(c.Claims))
	for _, k := range slices.Sorted(maps.Keys(c.Claims)) {
		claims = append(claims, k+"="+c.Claims[k])
	}
	return fmt.Sprintf("%q %q %q", c.Allow, c.Deny, claims)
}

// New checks the callers' definitions; its errors are *ConfigError.
func New(o Options) (*Set, error) {
	st, err := newState(o)
	if err != nil {
		return nil, err
	}
	s := &Set{}
	s.st.Store(st)
	return s, nil
}

func newState(o Options) (*setState, error) {
	s := &setState{byName: map[string]*Caller{}, byToken: map[[sha256.Size]byte]*Caller{}, now: o.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if len(o.Callers) == 0 {
		return nil, &ConfigError{Reason: "empty: define a caller, or leave callers out (every request then sees everything)"}
	}
	if o.JWT != nil && o.OAuth != nil {
		return nil, &ConfigError{Key: "oauth", Reason: "toolscout.jwt and toolscout.oauth are both set: oauth checks the identity provider's tokens itself; drop jwt"}
	}
	if o.JWT != nil {
		v, err := newJWTVerifier(*o.JWT)
		if err != nil {
			return nil, err
		}
		s.jwt = v
	}
	if o.OAuth != nil {
		v, err := newOAuthVerifier(*o.OAuth)
		if err != nil {
			return nil, err
		}
		s.oauth = v
	}
	for _, c := range o.Callers {
		if !validName(c.Name) {
			return nil, &ConfigError{Caller: c.Name, Reason: "a caller's name is 1 to 64 letters, digits, '-', '_' or '.'"}
		}
		if _, dup := s.byName[c.Name]; dup {
			return nil, &ConfigError{Caller: c.Name, Reason: "defined twice"}
		}
		pol, err := NewPolicy(c.Allow, c.Deny)
		if err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) {
				ce.Caller = c.Name
			}
			return nil, err
		}
		if len(c.Tokens) == 0 && len(c.Claims) == 0 {
			return nil, &ConfigError{Caller: c.Name, Reason: "no way to identify it: give token_files (bearer tokens) or jwt_claims (claims of a JWT)"}
		}
		if len(c.Claims) > 0 && s.jwt == nil && s.oauth == nil {
			return nil, &ConfigError{Caller: c.Name, Key: "jwt_claims", Reason: `JWTs are not checked: add "jwt": {"jwks_file" or "key_file", "issuer", "audience"} (or "oauth": {"issuer", "resource", "scopes"}) beside "callers"`}
		}
		for k, v := range c.Claims {
			if k == "" || v == "" {
				return nil, &ConfigError{Caller: c.Name, Key: "jwt_claims", Reason: fmt.Sprintf("claim %q: names and values must not be empty", k)}
			}
		}
		caller := &Caller{Name: c.Name, policy: pol, claims: maps.Clone(c.Claims), def: definition(c)}
		for i, tok := range c.Tokens {
			if len(tok) < MinTokenLen {
				return nil, &ConfigError{Caller: c.Name, Key: fmt.Sprintf("token_files[%d]", i), Reason: fmt.Sprintf("the token is %d characters: use at least %d random ones (openssl rand -hex 32)", len(tok), MinTokenLen)}
			}
			if strings.ContainsAny(tok, " \t\r\n") {
				return nil, &ConfigError{Caller: c.Name, Key: fmt.Sprintf("token_files[%d]", i), Reason: "the token has white space inside: a file holds one token"}
			}
			h := sha256.Sum256([]byte(tok))
			if other, dup := s.byToken[h]; dup && other != caller {
				return nil, &ConfigError{Caller: c.Name, Key: fmt.Sprintf("token_files[%d]", i), Reason: fmt.Sprintf("caller %s has the same token: each caller needs its own", other.Name)}
			}
			s.byToken[h] = caller
		}
		s.byName[c.Name] = caller
	}
	// Two callers named by the same claims could not be told apart.
	for _, a := range s.byName {
		for _, b := range s.byName {
			if a.Name < b.Name && len(a.claims) > 0 && maps.Equal(a.claims, b.claims) {
				return nil, &ConfigError{Caller: b.Name, Key: "jwt_claims", Reason: fmt.Sprintf("the same as caller %s's: a JWT would name both", a.Name)}
			}
		}
	}
	return s, nil
}

// validName reports whether name may name a caller (it becomes the
// audit trail's and the MCP session's user).
func validName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// leeway is the clock skew allowed on a JWT's expiry.
func (s *setState) leeway() time.Duration {
	switch {
	case s.oauth != nil:
		return s.oauth.o.Leeway
	case s.jwt != nil:
		return s.jwt.leeway
	}
	return 0
}

// Names returns the callers' names, sorted.
func (s *Set) Names() []string { return s.state().names() }

func (s *setState) names() []string { return slices.Sorted(maps.Keys(s.byName)) }

// Caller returns the named caller, or nil.
func (s *Set) Caller(name string) *Caller { return s.state().byName[name] }

// Identity is who a credential names, and until when.
type Identity struct {
	*Caller
	// Expires is the JWT's expiry (zero for a static token).
	Expires time.Time
	// Scopes are the OAuth access token's scopes.
	Scopes []string
	// ReadOnly says that the token's scopes let the caller run only the
	// tools that say they are read-only (OAuthOptions.ReadScopes).
	ReadOnly bool
}

// Authenticate returns the caller a bearer token names: one of a
// caller's tokens, or a JWT signed by a configured key, for this
// issuer and audience, unexpired, whose claims name exactly one caller.
// Its errors wrap ErrUnauthenticated and say why, for the log (tell the
// client only that its credential is not valid).
func (s *Set) Authenticate(ctx context.Context, token string) (Identity, error) {
	return s.state().authenticate(ctx, token)
}

func (s *setState) authenticate(ctx context.Context, token string) (Identity, error) {
	if token == "" {
		return Identity{}, fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	}
	if c := s.byToken[sha256.Sum256([]byte(token))]; c != nil {
		return Identity{Caller: c}, nil
	}
	var g tokenGrant
	isJWT := strings.Count(token, ".") == 2
	switch {
	case s.oauth != nil && isJWT:
		var err error
		if g, err = s.oauth.verifyJWT(ctx, token, s.now()); err != nil {
			return Identity{}, fmt.Errorf("%w: access token (JWT): %w", ErrUnauthenticated, err)
		}
	case s.oauth != nil && s.oauth.o.Introspect != nil:
		var err error
		if g, err = s.oauth.verifyOpaque(ctx, token, s.now()); err != nil {
			return Identity{}, fmt.Errorf("%w: access token (introspected): %w", ErrUnauthenticated, err)
		}
	case s.jwt != nil && isJWT:
		claims, exp, err := s.jwt.verify(token, s.now())
		if err != nil {
			return Identity{}, fmt.Errorf("%w: JWT: %v", ErrUnauthenticated, err)
		}
		g = tokenGrant{claims: claims, expires: exp}
	default:
		return Identity{}, fmt.Errorf("%w: the token is none of the callers' tokens", ErrUnauthenticated)
	}
	claims, exp := g.claims, g.expires
	var found []*Caller
	for _, name := range s.names() {
		if c := s.byName[name]; len(c.claims) > 0 && claimsMatch(c.claims, claims) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return Identity{}, fmt.Errorf("%w: a valid JWT whose claims name no caller", ErrUnauthenticated)
	case 1:
		return Identity{Caller: found[0], Expires: exp, Scopes: g.scopes, ReadOnly: g.readOnly}, nil
	}
	names := make([]string, len(found))
	for i, c := range found {
		names[i] = c.Name
	}
	return Identity{}, fmt.Errorf("%w: a JWT whose claims name several callers (%s): make their jwt_claims exclusive", ErrUnauthenticated, strings.Join(names, ", "))
}

// claimsMatch reports whether every wanted claim is in got: a string
// equal to it, or an array holding it.
func claimsMatch(want map[string]string, got map[string]any) bool {
	for k, v := range want {
		switch g := got[k].(type) {
		case string:
			if g != v {
				return false
			}
		case []any:
			if !slices.Contains(g, any(v)) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

type callerKey struct{}

// WithCaller returns ctx carrying c, the caller of the request ctx
// belongs to.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// FromContext returns the caller WithCaller put in ctx, or nil.
func FromContext(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}

// Nobody returns a caller that sees nothing: what a server with callers
// configured answers a request it cannot tie to one (it should never
// have to).
func Nobody() *Caller { return &Caller{Name: "", policy: &Policy{}} }
