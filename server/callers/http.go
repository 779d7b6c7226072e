package callers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Require wraps h so that every request must name a caller with its
// bearer token: one without a valid one gets 401 and a WWW-Authenticate
// challenge (the reason goes to log, not to the client); one with a
// valid one reaches h with its caller in the context (FromContext), and
// with go-sdk token info whose UserID is the caller's name, so that an
// MCP session answers only the caller that opened it, and audit and
// feedback name the caller.
func (s *Set) Require(h http.Handler, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The go-sdk puts its token info in the context only through its
	// own middleware: it is handed the identity already found.
	withInfo := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		id, ok := ctx.Value(identityKey{}).(Identity)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: id.Name, Expiration: id.Expires}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true, ClockSkew: s.leeway()})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuseAuthorizationTwice(w, r, log) {
			return
		}
		id, err := s.Authenticate(r.Context(), bearerToken(r.Header.Get("Authorization")))
		if err != nil {
			log.Info("request refused", "path", r.URL.Path, "remote", r.RemoteAddr, "why", err)
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolscout", error="invalid_token"`)
			http.Error(w, "Unauthorized: send your caller's token as \"Authorization: Bearer TOKEN\" (a token of its token_files, or a JWT its jwt_claims name)", http.StatusUnauthorized)
			return
		}
		ctx := context.WithValue(WithCaller(r.Context(), id.Caller), identityKey{}, id)
		withInfo.ServeHTTP(w, r.WithContext(ctx))
	})
}

type identityKey struct{}

// refuseAuthorizationTwice answers a request that gives Authorization
// more than once with 400: the caller would be the first copy's while a
// proxy in front may have checked the other (as with the routing
// headers, server.refuseDuplicateHeaders). It reports whether it
// answered.
func refuseAuthorizationTwice(w http.ResponseWriter, r *http.Request, log *slog.Logger) bool {
	n := len(r.Header.Values("Authorization"))
	if n < 2 {
		return false
	}
	log.Info("request refused", "path", r.URL.Path, "remote", r.RemoteAddr, "why", fmt.Sprintf("Authorization given %d times", n))
	http.Error(w, fmt.Sprintf("Bad Request: header Authorization is given %d times: give it once", n), http.StatusBadRequest)
	return true
}

// bearerToken returns the credentials of an "Authorization: Bearer TOKEN"
// header ("" when there are none). The scheme is case-insensitive.
func bearerToken(h string) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
