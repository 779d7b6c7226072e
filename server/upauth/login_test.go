package upauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authServer is an OAuth authorization server for the tests: RFC 8414
// metadata, an authorization endpoint that grants at once (the test
// plays the browser) and a token endpoint that checks PKCE, the client
// and the redirect; no registration endpoint (a client id must be
// configured).
type authServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	codes map[string]url.Values // code → the authorization request
	asked []string              // the scopes of each authorization request
}

func newAuthServer(t *testing.T) *authServer {
	as := &authServer{codes: map[string]url.Values{}}
	mux := http.NewServeMux()
	as.srv = httptest.NewServer(mux)
	t.Cleanup(as.srv.Close)
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": as.srv.URL, "authorization_endpoint": as.srv.URL + "/authorize",
			"token_endpoint": as.srv.URL + "/token", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic"}})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		as.mu.Lock()
		code := fmt.Sprintf("code-%d", len(as.codes))
		as.codes[code] = q
		as.asked = append(as.asked, q.Get("scope"))
		as.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		as.mu.Lock()
		q, ok := as.codes[r.Form.Get("code")]
		delete(as.codes, r.Form.Get("code"))
		as.mu.Unlock()
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		client, secret := r.Form.Get("client_id"), ""
		if u, p, ok := r.BasicAuth(); ok {
			client, secret = u, p
		}
		w.Header().Set("Content-Type", "application/json")
		if client == confidentialClient && secret != confidentialSecret {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":"invalid_client","error_description":"wrong secret %s"}`, secret)
			return
		}
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != q.Get("code_challenge") || r.Form.Get("redirect_uri") != q.Get("redirect_uri") || client != "preregistered" && client != confidentialClient {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"invalid_grant","error_description":"no grant for %s from %s"}`, r.Form.Get("code"), r.Form.Get("code_verifier"))
			return
		}
		fmt.Fprintf(w, `{"access_token":"at-secret","token_type":"Bearer","expires_in":600,"refresh_token":"rt-secret","scope":%q}`, q.Get("scope"))
	})
	return as
}

// The confidential client the test authorization server knows, and its
// secret (sent with HTTP Basic).
const (
	confidentialClient = "confidential"
	confidentialSecret = "client-secret-0123456789"
)

// protectedMCP serves an MCP server behind the go-sdk's bearer middleware
// (tokens: at-secret), with its protected resource metadata naming as.
func protectedMCP(t *testing.T, as *authServer) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if tok != "at-secret" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: hs.URL + "/mcp", AuthorizationServers: []string{as.srv.URL}, ScopesSupported: []string{"tools.read", "tools.run"}}))
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: hs.URL + "/.well-known/oauth-protected-resource/mcp"})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)))
	return hs.URL + "/mcp"
}

// browser follows the authorization URL as a browser would (the grant is
// at once), redirect included.
func browser(t *testing.T) func(string) error {
	return func(u string) error {
		go func() {
			resp, err := http.Get(u)
			if err != nil {
				t.Errorf("browser: %v", err)
				return
			}
			resp.Body.Close()
		}()
		return nil
	}
}

func TestLoginPreregisteredClient(t *testing.T) {
	as := newAuthServer(t)
	mcpURL := protectedMCP(t, as)
	for _, tc := range []struct {
		name      string
		scopes    []string
		wantScope string
	}{
		{"scopes from the metadata", nil, "tools.read tools.run"},
		{"configured scopes", []string{"tools.read"}, "tools.read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := OpenStore(filepath.Join(t.TempDir(), FileName))
			var out strings.Builder
			e, err := Login(t.Context(), LoginOptions{Server: "remote", URL: mcpURL, ClientID: "preregistered", Scopes: tc.scopes,
				Store: st, Open: browser(t), Out: &out})
			if err != nil {
				t.Fatalf("Login: %v\n%s", err, out.String())
			}
			got, _ := st.Get("remote")
			if got == nil || got.AccessToken != "at-secret" || got.RefreshToken != "rt-secret" || got.URL != mcpURL || got.ClientID != "preregistered" ||
				strings.Join(got.Scopes, " ") != tc.wantScope || time.Until(got.Expiry) < 5*time.Minute || got.TokenURL != as.srv.URL+"/token" {
				t.Errorf("stored entry = %+v (Login returned %+v), want the tokens, scopes %q, the token URL", got, e, tc.wantScope)
			}
			if strings.Contains(out.String(), "secret") || !strings.Contains(out.String(), "Opened the browser") {
				t.Errorf("Login's output = %q: want the browser said, no token", out.String())
			}
			// The token works at the server: a client with it lists tools.
			src := NewSource(st, "remote", mcpURL, nil, nil)
			tok, err := src.Token(t.Context())
			if err != nil || tok != "at-secret" {
				t.Errorf("Source.Token = %q, %v", tok, err)
			}
		})
	}
}

// TestLoginConfidentialClient: a client registered with a secret signs
// in with it (and keeps it for the refreshes); a wrong secret is refused
// with the OAuth error code, the secret quoted nowhere.
func TestLoginConfidentialClient(t *testing.T) {
	as := newAuthServer(t)
	mcpURL := protectedMCP(t, as)
	st := OpenStore(filepath.Join(t.TempDir(), FileName))
	var out strings.Builder
	e, err := Login(t.Context(), LoginOptions{Server: "remote", URL: mcpURL, ClientID: confidentialClient, ClientSecret: confidentialSecret,
		Store: st, Open: browser(t), Out: &out})
	if err != nil {
		t.Fatalf("Login with the client secret: %v\n%s", err, out.String())
	}
	if got, _ := st.Get("remote"); got == nil || got.AccessToken != "at-secret" || got.ClientID != confidentialClient || got.ClientSecret != confidentialSecret {
		t.Errorf("stored entry = %+v (Login returned %+v), want the tokens and the client's secret for the refreshes", got, e)
	}
	_, err = Login(t.Context(), LoginOptions{Server: "remote", URL: mcpURL, ClientID: confidentialClient, ClientSecret: "wrong-secret-0123456789",
		Store: OpenStore(filepath.Join(t.TempDir(), FileName)), Open: browser(t), Out: &out})
	if err == nil || !strings.Contains(err.Error(), "invalid_client") || strings.Contains(err.Error()+out.String(), "secret-0123456789") {
		t.Errorf("Login with a wrong secret = %v, want invalid_client and no secret quoted", err)
	}
}

func TestLoginRefusals(t *testing.T) {
	as := newAuthServer(t)
	mcpURL := protectedMCP(t, as)
	open := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(open.Close)
	st := OpenStore(filepath.Join(t.TempDir(), FileName))

	// No 401: nothing to sign in to.
	_, err := Login(t.Context(), LoginOptions{Server: "open", URL: open.URL, Store: st})
	if !errors.Is(err, ErrNoChallenge) || !strings.Contains(err.Error(), "HTTP 200") {
		t.Errorf("Login at a server without a 401 = %v, want ErrNoChallenge naming its answer", err)
	}
	// No client id and no registration endpoint: say what to configure.
	_, err = Login(t.Context(), LoginOptions{Server: "remote", URL: mcpURL, Store: st})
	if err == nil || !strings.Contains(err.Error(), `"client_id"`) {
		t.Errorf("Login without a client id where no registration is offered = %v, want the client_id advice", err)
	}
	// The token endpoint refuses, echoing the code and the verifier:
	// only its error code is quoted.
	_, err = Login(t.Context(), LoginOptions{Server: "remote", URL: mcpURL, ClientID: "unknown-client", Store: st, Open: browser(t)})
	if err == nil || !strings.Contains(err.Error(), "HTTP 400, invalid_grant") || strings.Contains(err.Error(), "code-") || strings.Contains(err.Error(), "no grant") {
		t.Errorf("Login refused at the token endpoint = %v, want its error code and none of its text", err)
	}
	// The user never comes back: the wait ends with ctx, the URL printed.
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	var out strings.Builder
	_, err = Login(ctx, LoginOptions{Server: "remote", URL: mcpURL, ClientID: "preregistered", Store: st, Out: &out})
	if err == nil || !strings.Contains(out.String(), "open this URL in a browser") || !strings.Contains(out.String(), "/authorize?") {
		t.Errorf("Login without a browser = %v, output %q; want the URL printed and an error at ctx's end", err, out.String())
	}
	if e, _ := st.Get("remote"); e != nil {
		t.Errorf("an entry was stored by failed logins: %+v", e)
	}
}
