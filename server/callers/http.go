package callers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
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
	// own middleware: it is handed the identity already found. Expiry is
	// checked by Authenticate (with the leeway of the definitions that
	// checked it), so the middleware's own check is left out.
	withInfo := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		id, ok := ctx.Value(identityKey{}).(Identity)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		info := &auth.TokenInfo{UserID: id.Name, Scopes: id.Scopes}
		if id.ReadOnly {
			info.Extra = map[string]any{readOnlyExtra: true}
		}
		return info, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuseAuthorizationTwice(w, r, log) {
			return
		}
		st := s.state()
		token := bearerToken(r.Header.Get("Authorization"))
		id, err := st.authenticate(r.Context(), token)
		if err != nil {
			log.Info("request refused", "path", r.URL.Path, "remote", r.RemoteAddr, "why", err)
			st.refuse(w, token != "", err)
			return
		}
		ctx := context.WithValue(WithCaller(r.Context(), id.Caller), identityKey{}, id)
		withInfo.ServeHTTP(w, r.WithContext(ctx))
	})
}

// refuse answers a request without a valid credential: 401 with a
// challenge (with OAuth, one that names the protected resource metadata
// and the scopes, as the MCP authorization specification asks), or 403
// insufficient_scope for a valid token without the scopes asked for.
// The reason is the log's, not the client's.
func (s *setState) refuse(w http.ResponseWriter, sent bool, err error) {
	if s.oauth == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolscout", error="invalid_token"`)
		http.Error(w, "Unauthorized: send your caller's token as \"Authorization: Bearer TOKEN\" (a token of its token_files, or a JWT its jwt_claims name)", http.StatusUnauthorized)
		return
	}
	if errors.Is(err, ErrInsufficientScope) {
		w.Header().Set("WWW-Authenticate", s.oauth.challenge("insufficient_scope"))
		http.Error(w, fmt.Sprintf("Forbidden: the access token holds none of the scopes this server asks for (%s)", strings.Join(s.oauth.o.Scopes, " ")), http.StatusForbidden)
		return
	}
	code := ""
	if sent {
		code = "invalid_token"
	}
	w.Header().Set("WWW-Authenticate", s.oauth.challenge(code))
	http.Error(w, "Unauthorized: send an access token of "+s.oauth.o.Issuer+" for "+s.oauth.o.Resource+" as \"Authorization: Bearer TOKEN\" (how to get one: "+s.oauth.metadataAt+")", http.StatusUnauthorized)
}

// readOnlyExtra is the go-sdk token info's Extra key that marks a
// read-only token (ReadOnly).
const readOnlyExtra = "toolscout.read_only"

// ReadOnly reports whether the token a request came with lets its caller
// run only the tools that say they are read-only (OAuthOptions.
// ReadScopes). info is the go-sdk's, as a tool handler gets it
// (CallToolRequest.Extra.TokenInfo).
func ReadOnly(info *auth.TokenInfo) bool {
	if info == nil {
		return false
	}
	ro, _ := info.Extra[readOnlyExtra].(bool)
	return ro
}

// MetadataHandler serves the protected resource metadata (RFC 9728),
// nil without OAuth. Serve it at the paths MetadataPaths names.
func (s *Set) MetadataHandler() http.Handler {
	if s.ProtectedResourceMetadata() == nil {
		return nil
	}
	// The metadata of the definitions in force at each request.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		md := s.ProtectedResourceMetadata()
		if md == nil {
			http.NotFound(w, r)
			return
		}
		auth.ProtectedResourceMetadataHandler(md).ServeHTTP(w, r)
	})
}

// MetadataPaths are the paths the metadata is served at: the
// path-inserted one of the resource (RFC 9728 section 3.1, where the
// challenge points and clients look first) and the root one (where
// clients of the 2025-06-18 specification look).
func (s *Set) MetadataPaths() []string {
	v := s.state().oauth
	if v == nil {
		return nil
	}
	u, err := url.Parse(v.metadataAt)
	if err != nil {
		return nil
	}
	paths := []string{u.Path}
	if root := "/.well-known/oauth-protected-resource"; u.Path != root {
		paths = append(paths, root)
	}
	return paths
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
