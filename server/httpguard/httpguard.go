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

// Wrap wraps a handler with the checks the MCP transport spec asks of
// servers, for every endpoint that reveals data (/mcp, /metrics):
//
//   - a request that reached a loopback address with a Host header that is
//     not a loopback name or address is refused (403): a DNS-rebinding
//     page (http://evil.example resolving to 127.0.0.1) sends its own
//     name as Host, and often no Origin (a same-origin GET). This is the
//     go-sdk's check of /mcp (StreamableHTTPOptions.
//     DisableLocalhostProtection), made here so that every wrapped
//     endpoint has it, and before anything of the request is read;
//   - a request with an Origin header is refused (403) unless the origin
//     is a loopback one (localhost, 127.0.0.0/8, [::1]) or listed in
//     AllowedOrigins, against cross-site requests. Requests without an
//     Origin (non-browser clients) pass;
//   - with a Token, a request without "Authorization: Bearer TOKEN" gets
//     401 and a WWW-Authenticate challenge, and one that gives
//     Authorization twice gets 400.
func Wrap(h http.Handler, o Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r) {
			http.Error(w, fmt.Sprintf("Forbidden: Host %.100q is not this machine: toolscout on a loopback address answers requests addressed to localhost, 127.0.0.1 or [::1] only (against DNS rebinding)", r.Host), http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, o.AllowedOrigins) {
			http.Error(w, fmt.Sprintf("Forbidden: origin %.100q may not use this server: toolscout accepts browser requests from loopback origins only; start it with --allow-origin ORIGIN to add one", origin), http.StatusForbidden)
			return
		}
		if o.Token != "" {
			// Two copies: which one a proxy in front checked is
			// unknown, so neither is taken.
			if n := len(r.Header.Values("Authorization")); n > 1 {
				http.Error(w, fmt.Sprintf("Bad Request: header Authorization is given %d times: give it once", n), http.StatusBadRequest)
				return
			}
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

// hostAllowed reports whether r may be answered as far as its Host header
// goes: it may unless it reached a loopback address (the listener's side
// of the connection, as net/http records it) under a name that is not a
// loopback one. A request that reached another address came over the
// network, where a token guards the server (cmd refuses a non-loopback
// address without one) and the Host is whatever name the network uses.
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return true
	}
	if host, _, err := net.SplitHostPort(local.String()); err != nil || !IsLoopbackHost(host) {
		return true
	}
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host // no port
	}
	return IsLoopbackHost(host)
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
