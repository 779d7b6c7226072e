package gateway

import (
	"net/url"
	"strings"

	"github.com/toolscout/toolscout/internal/redact"
)

// What toolscout quotes of an upstream's WWW-Authenticate (issue 52):
// nothing the server wrote as free text. A server that refuses
// toolscout's credentials may echo them (error_description="bad token
// Bearer ...", scope="<credential>"), by a bug or to fish for them, and
// the refusal reaches every caller allowed that server. Kept, per
// challenge: the scheme, realm, the error code and resource_metadata
// (the URL the OAuth flow reads), and the scope (RFC 6750 §3: what a
// step-up sign-in asks for, a few short scope tokens), each only when it
// is short and printable and holds nothing of what toolscout sent;
// dropped: error_description, error_uri, token68 and every other
// parameter.

// Bounds of what is read and kept of WWW-Authenticate.
const (
	maxChallengeBytes = 8 << 10 // read of the header(s), joined
	maxChallenges     = 4       // challenges kept
	maxScheme         = 32
	maxRealm          = 64
	maxErrorCode      = 64
	maxResourceURL    = 512
	maxScopes         = 16 // scope tokens kept of one challenge
	maxScopeToken     = 128
)

// authChallenge is what toolscout keeps of one challenge of a
// WWW-Authenticate header ("" for what it did not keep).
type authChallenge struct {
	scheme           string
	realm            string
	errorCode        string // the "error" parameter (RFC 6750 §3)
	resourceMetadata string // RFC 9728 §5.1
	// scopes are the scope parameter's tokens (RFC 6750 §3), each a
	// scope-token of RFC 6749 §3.3; nil when any of them is not one.
	scopes []string
}

// String writes c as a challenge: `Bearer realm="x", error="invalid_token"`.
func (c authChallenge) String() string {
	var b strings.Builder
	b.WriteString(c.scheme)
	sep := " "
	for _, p := range [...]struct{ name, value string }{{"realm", c.realm}, {"error", c.errorCode}, {"resource_metadata", c.resourceMetadata}} {
		if p.value == "" {
			continue
		}
		b.WriteString(sep + p.name + `="` + p.value + `"`)
		sep = ", "
	}
	return b.String()
}

// keptChallenges parses the values of an upstream's WWW-Authenticate
// headers and returns what may be quoted of them: a part that holds any
// of sent (the header values toolscout sent, or a form of them that
// secrets knows), or that is held by one of sent, is left out.
func keptChallenges(headers []string, sent []string, secrets *redact.Redactor) []authChallenge {
	joined := strings.Join(headers, ", ")
	secrets = secrets.With(sent...)
	leaks := func(v string) bool {
		if secrets.Contains(v) {
			return true
		}
		for _, s := range sent {
			if len(v) >= 8 && strings.Contains(s, v) {
				return true // a piece of a credential
			}
		}
		return false
	}
	var out []authChallenge
	for _, c := range parseChallenges(joined[:min(len(joined), maxChallengeBytes)]) {
		if len(c.scheme) > maxScheme || leaks(c.scheme) {
			continue
		}
		kept := authChallenge{scheme: c.scheme}
		if v := c.params["realm"]; len(v) <= maxRealm && printable(v) && !leaks(v) {
			kept.realm = v
		}
		if v := c.params["error"]; len(v) <= maxErrorCode && errorCode(v) && !leaks(v) {
			kept.errorCode = v
		}
		if v := c.params["resource_metadata"]; len(v) <= maxResourceURL && resourceURL(v) && !leaks(v) {
			kept.resourceMetadata = v
		}
		kept.scopes = scopeTokens(c.params["scope"], leaks)
		out = append(out, kept)
		if len(out) == maxChallenges {
			break
		}
	}
	return out
}

// printable reports whether s is printable ASCII without quotes or
// backslashes: it reads the same quoted.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// errorCode reports whether s is an error code as OAuth servers write
// them (invalid_token, insufficient_scope): letters, digits, _ . -.
func errorCode(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// scopeTokens returns the scope-tokens of a challenge's scope parameter
// (RFC 6749 §3.3: space-separated, NQCHAR), or nil when there are too
// many, one is too long or not a scope-token, or one leaks.
func scopeTokens(v string, leaks func(string) bool) []string {
	f := strings.Fields(v)
	if len(f) == 0 || len(f) > maxScopes {
		return nil
	}
	for _, t := range f {
		if len(t) > maxScopeToken || !printable(t) || leaks(t) {
			return nil
		}
	}
	return f
}

// resourceURL reports whether s is an absolute http(s) URL without user
// information, printable and without spaces.
func resourceURL(s string) bool {
	if s == "" || !printable(s) || strings.ContainsAny(s, " <>") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil
}

// challenge is one parsed challenge: its scheme and its parameters by
// lowercased name (the first of a name repeated).
type challenge struct {
	scheme string
	params map[string]string
}

// parseChallenges parses a WWW-Authenticate value (RFC 9110 §11.6.1):
//
//	WWW-Authenticate = #challenge
//	challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//	auth-param = token BWS "=" BWS ( token / quoted-string )
//
// A token68 is read and dropped. Parsing stops at what does not follow
// the grammar, keeping the challenges read before it.
func parseChallenges(s string) []challenge {
	p := &authParser{s: s}
	var out []challenge
	for {
		p.skipSeparators()
		scheme := p.token()
		if scheme == "" {
			return out // the end, or not a challenge
		}
		c := challenge{scheme: scheme, params: map[string]string{}}
		if p.i < len(p.s) && p.s[p.i] == ' ' {
			p.skipSpace()
			if !p.params(c.params) {
				return append(out, c)
			}
		}
		out = append(out, c)
	}
}

// authParser reads s from i.
type authParser struct {
	s string
	i int
}

// params reads the auth-params (or the token68) of a challenge into
// into, up to the next challenge; it reports false when what follows
// does not parse.
func (p *authParser) params(into map[string]string) bool {
	for first := true; ; first = false {
		start := p.i
		name := p.token()
		p.skipSpace()
		if name == "" || !p.eat('=') {
			// A token68 (only right after the scheme), or the next
			// challenge's scheme.
			p.i = start
			if first {
				p.token68()
			}
			return true
		}
		p.skipSpace()
		var value string
		if p.i < len(p.s) && p.s[p.i] == '"' {
			var ok bool
			if value, ok = p.quoted(); !ok {
				return false
			}
		} else if value = p.token(); value == "" {
			// "abc=" or "abc==": a token68 with padding.
			p.i = start
			if first {
				p.token68()
			}
			return true
		}
		if key := strings.ToLower(name); into[key] == "" {
			into[key] = value
		}
		p.skipSpace()
		if p.i == len(p.s) {
			return true
		}
		if !p.eat(',') {
			return false
		}
		p.skipSeparators()
	}
}

func (p *authParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *authParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// skipSeparators skips spaces and commas: empty list elements.
func (p *authParser) skipSeparators() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func (p *authParser) token() string {
	start := p.i
	for p.i < len(p.s) && redact.IsTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// token68 skips a token68: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" /
// "+" / "/" ) *"=".
func (p *authParser) token68() {
	for p.i < len(p.s) && (redact.IsTokenChar(p.s[p.i]) || p.s[p.i] == '/') {
		p.i++
	}
	for p.i < len(p.s) && p.s[p.i] == '=' {
		p.i++
	}
	p.skipSpace()
}

// quoted reads a quoted-string at p.i and returns its value, unescaped;
// false when it does not end.
func (p *authParser) quoted() (string, bool) {
	p.i++ // the opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch c {
		case '"':
			return b.String(), true
		case '\\':
			if p.i == len(p.s) {
				return "", false
			}
			c = p.s[p.i]
			p.i++
		}
		b.WriteByte(c)
	}
	return "", false
}
