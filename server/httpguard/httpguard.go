package httpguard

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Options configures Wrap.
type Options struct {
	// AllowedOrigins are origins ("https://app.example:8443") allowed
	// besides loopback ones; "*" allows any.
	AllowedOrigins []string
	// Token, when set, is the bearer token every request must carry.
	Token string
}

// Wrap wraps an MCP HTTP handler with the checks the MCP transport spec
// asks of servers: a request with an Origin header is refused (403) unless
// the origin is a loopback one (localhost, 127.0.0.0/8, [::1]) or listed in
// AllowedOrigins, against DNS rebinding and cross-site requests; with a
// Token, a request without "Authorization: Bearer TOKEN" gets 401 and a
// WWW-Authenticate challenge. Requests without an Origin (non-browser
// clients) pass the origin check.
func Wrap(h http.Handler, o Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, o.AllowedOrigins) {
			http.Error(w, fmt.Sprintf("Forbidden: origin %.100q may not use this server: toolscout accepts browser requests from loopback origins only; start it with --allow-origin ORIGIN to add one", origin), http.StatusForbidden)
			return
		}
		if o.Token != "" {
			got, ok := bearerToken(r.Header.Get("Authorization"))
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(o.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolscout", error="invalid_token"`)
				http.Error(w, "Unauthorized: send the token as \"Authorization: Bearer TOKEN\" (the one in TOOLSCOUT_AUTH_TOKEN or --auth-token-file)", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// bearerToken returns the credentials of an "Authorization: Bearer TOKEN"
// header. The scheme is case-insensitive (RFC 9110, section 11.1), and
// one or more spaces may follow it (RFC 6750, section 2.1).
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func originAllowed(origin string, allowed []string) bool {
	if slices.Contains(allowed, "*") || slices.Contains(allowed, strings.TrimRight(origin, "/")) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // "null" (sandboxed pages, files) and malformed origins
	}
	return IsLoopbackHost(u.Hostname())
}

// IsLoopbackHost reports whether host (a name or an IP, without a port)
// is this machine's loopback.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
