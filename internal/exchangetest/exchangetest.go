// Package exchangetest serves, for tests of per-caller identity by token
// exchange (issue 45 item 1), an OAuth authorization server that speaks
// RFC 8414 metadata and an RFC 8693 token endpoint, and a remote MCP
// server (the go-sdk's, Streamable HTTP) behind a bearer check that
// accepts only the tokens that server issued for its resource.
//
//	as := exchangetest.StartAS(t, "client", "secret", map[string]string{aliceJWT: "alice"})
//	url := exchangetest.StartUpstream(t, as, ownToken, true) // whoami answers "you are alice"
package exchangetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The RFC 8693 identifiers.
const (
	TokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// AS is an OAuth authorization server: it authenticates its one client
// (client_secret_post or client_secret_basic), takes as subject tokens
// the tokens of its users (token → user: the identity provider the
// callers sign in with), and issues access tokens of 120 s bound to the
// resource asked for. A subject token it does not know is refused
// (invalid_grant), its answer echoing it, as some servers do.
type AS struct {
	URL string

	mu        sync.Mutex
	issued    map[string]issued // token → who and for what
	exchanges map[string]int    // by user
	wire      []string          // every token it answered with
}

type issued struct{ user, resource string }

// StartAS starts an authorization server for t.
func StartAS(t testing.TB, clientID, clientSecret string, users map[string]string) *AS {
	t.Helper()
	as := &AS{issued: map[string]issued{}, exchanges: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                as.URL,
			"authorization_endpoint":                as.URL + "/authorize",
			"token_endpoint":                        as.URL + "/token",
			"jwks_uri":                              as.URL + "/jwks",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", GrantTokenExchange},
			"token_endpoint_auth_methods_supported": []string{"client_secret_post", "client_secret_basic"},
			"code_challenge_methods_supported":      []string{"S256"},
		})
	})
	oauthError := func(w http.ResponseWriter, status int, code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
		}
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			oauthError(w, http.StatusBadRequest, "invalid_request", "not a form")
			return
		}
		id, secret, basic := r.BasicAuth()
		if !basic {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		f := r.PostForm
		switch {
		case id != clientID || secret != clientSecret:
			oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		case f.Get("grant_type") != GrantTokenExchange:
			oauthError(w, http.StatusBadRequest, "unsupported_grant_type", f.Get("grant_type"))
		case f.Get("subject_token_type") != TokenTypeAccess || f.Get("requested_token_type") != "" && f.Get("requested_token_type") != TokenTypeAccess:
			oauthError(w, http.StatusBadRequest, "invalid_request", "unsupported token type")
		case users[f.Get("subject_token")] == "":
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown subject token "+f.Get("subject_token"))
		case f.Get("resource") == "" || f.Get("audience") != "" && f.Get("audience") != f.Get("resource"):
			oauthError(w, http.StatusBadRequest, "invalid_target", "no resource")
		default:
			user := users[f.Get("subject_token")]
			b := make([]byte, 16)
			rand.Read(b)
			tok := "xchg-" + user + "-" + hex.EncodeToString(b)
			as.mu.Lock()
			as.issued[tok] = issued{user: user, resource: f.Get("resource")}
			as.exchanges[user]++
			as.wire = append(as.wire, tok)
			as.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "issued_token_type": TokenTypeAccess, "token_type": "Bearer", "expires_in": 120})
		}
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	as.URL = hs.URL
	return as
}

// Revoke forgets user's tokens: the upstream then refuses them.
func (as *AS) Revoke(user string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	for tok, it := range as.issued {
		if it.user == user {
			delete(as.issued, tok)
		}
	}
}

// Counts says how many exchanges each user had, as "map[alice:1]".
func (as *AS) Counts() string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return fmt.Sprint(as.exchanges)
}

// Issued returns every token the server issued.
func (as *AS) Issued() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return append([]string(nil), as.wire...)
}

// user returns whom tok was issued to for resource ("" : nobody).
func (as *AS) user(tok, resource string) string {
	as.mu.Lock()
	defer as.mu.Unlock()
	if it, ok := as.issued[tok]; ok && it.resource == resource {
		return it.user
	}
	return ""
}

// Forbidden is the user whose exchanged tokens the upstream refuses
// with 403 insufficient_scope.
const Forbidden = "forbidden"

// StartUpstream starts a remote MCP server at URL/mcp, whose URL it
// returns: it accepts own (the token of toolscout's own sign-in: its
// listing, answered as "toolscout") and the tokens as issued for its
// own resource (but Forbidden's), nothing else; its protected resource metadata names
// as's issuer (unless metadata is false: then it has none). Its whoami
// tool answers "you are USER".
func StartUpstream(t testing.TB, as *AS, own string, metadata bool) string {
	t.Helper()
	var resource string
	who := func(h http.Header) string {
		tok, _ := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
		if tok == own {
			return "toolscout"
		}
		return as.user(tok, resource)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "identity", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "whoami", Description: "Say which user the request is made as.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are " + who(req.Extra.Header)}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		if !metadata {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": resource, "authorization_servers": []string{as.URL}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if who(r.Header) == Forbidden {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="admin"`)
			http.Error(w, "not allowed", http.StatusForbidden)
			return
		}
		if who(r.Header) == "" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+strings.TrimSuffix(resource, "/mcp")+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "unknown token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	hs := httptest.NewServer(mux)
	// A session left open (a bug) must fail the test, not hang it.
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	resource = hs.URL + "/mcp"
	return resource
}
