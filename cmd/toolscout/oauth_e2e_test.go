package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// testIdP is an OAuth 2.1 authorization server for the tests: RFC 8414
// metadata at its issuer's well-known URL (path inserted), an
// authorization endpoint that grants the code at once to the user set
// in user (the test plays the browser), a token endpoint that checks
// PKCE and issues JWTs signed with its key for the resource asked
// (RFC 8707), and its JWKS.
type testIdP struct {
	srv    *httptest.Server
	issuer string
	user   atomic.Value // string: who signs in at the authorization endpoint
	scope  atomic.Value // string: the scopes granted ("" : those asked)

	mu       sync.Mutex
	key      *ecdsa.PrivateKey
	kid      string
	codes    map[string]grantCode
	issued   []string                  // every access token issued
	opaque   map[string]map[string]any // opaque token → its introspection answer
	jwksHits atomic.Int64
}

type grantCode struct{ challenge, resource, scope, user string }

func newTestIdP(t *testing.T) *testIdP {
	t.Helper()
	idp := &testIdP{codes: map[string]grantCode{}, opaque: map[string]map[string]any{}}
	idp.rotateKey(t, "k1")
	idp.user.Store("alice")
	idp.scope.Store("")
	mux := http.NewServeMux()
	idp.srv = httptest.NewServer(mux)
	t.Cleanup(idp.srv.Close)
	idp.issuer = idp.srv.URL + "/realms/acme"
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /.well-known/oauth-authorization-server/realms/acme", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": idp.issuer, "authorization_endpoint": idp.issuer + "/authorize", "token_endpoint": idp.issuer + "/token",
			"jwks_uri": idp.issuer + "/jwks", "introspection_endpoint": idp.issuer + "/introspect", "response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"scopes_supported": []string{"tools.read", "tools.run"},
		})
	})
	mux.HandleFunc("GET /realms/acme/jwks", func(w http.ResponseWriter, r *http.Request) {
		idp.jwksHits.Add(1)
		idp.mu.Lock()
		set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &idp.key.PublicKey, KeyID: idp.kid, Algorithm: "ES256", Use: "sig"}}}
		idp.mu.Unlock()
		writeJSON(w, set)
	})
	mux.HandleFunc("POST /realms/acme/introspect", func(w http.ResponseWriter, r *http.Request) {
		if id, secret, ok := r.BasicAuth(); !ok || id != "toolscout" || secret != introspectionSecret {
			http.Error(w, "unknown client", http.StatusUnauthorized)
			return
		}
		r.ParseForm()
		idp.mu.Lock()
		answer, ok := idp.opaque[r.PostForm.Get("token")]
		idp.mu.Unlock()
		if !ok {
			answer = map[string]any{"active": false}
		}
		writeJSON(w, answer)
	})
	mux.HandleFunc("GET /realms/acme/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
			http.Error(w, "want response_type=code, a S256 code_challenge and a resource: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		code := rand.Text()
		idp.mu.Lock()
		idp.codes[code] = grantCode{challenge: q.Get("code_challenge"), resource: q.Get("resource"), scope: q.Get("scope"), user: idp.user.Load().(string)}
		idp.mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		back := to.Query()
		back.Set("code", code)
		back.Set("state", q.Get("state"))
		to.RawQuery = back.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /realms/acme/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		idp.mu.Lock()
		g, ok := idp.codes[r.PostForm.Get("code")]
		delete(idp.codes, r.PostForm.Get("code"))
		idp.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.PostForm.Get("resource") != g.resource {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		scope := g.scope
		if s := idp.scope.Load().(string); s != "" {
			scope = s
		}
		tok := idp.issue(t, map[string]any{"sub": g.user, "aud": g.resource, "scope": scope})
		writeJSON(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": scope})
	})
	return idp
}

// rotateKey makes the IdP sign with a new key of id kid (and publish
// only that one).
func (idp *testIdP) rotateKey(t *testing.T, kid string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	idp.mu.Lock()
	idp.key, idp.kid = key, kid
	idp.mu.Unlock()
}

// issue signs an access token: the issuer, an hour's validity and the
// claims given (which may override them).
func (idp *testIdP) issue(t *testing.T, claims map[string]any) string {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: idp.key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", idp.kid))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]any{"iss": idp.issuer, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(), "jti": rand.Text()}
	for k, v := range claims {
		all[k] = v
	}
	tok, err := jwt.Signed(sig).Claims(all).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	idp.issued = append(idp.issued, tok)
	return tok
}

// issueOpaque makes an opaque access token whose introspection answers
// claims (active unless claims say otherwise).
func (idp *testIdP) issueOpaque(claims map[string]any) string {
	tok := "opaque-" + rand.Text()
	answer := map[string]any{"active": true, "iss": idp.issuer}
	for k, v := range claims {
		answer[k] = v
	}
	idp.mu.Lock()
	defer idp.mu.Unlock()
	idp.opaque[tok] = answer
	idp.issued = append(idp.issued, tok)
	return tok
}

// introspectionSecret is toolscout's client secret at the test IdP.
const introspectionSecret = "introspection-secret-0123456789"

// tokens returns every access token the IdP issued.
func (idp *testIdP) tokens() []string {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	return append([]string(nil), idp.issued...)
}

// freeAddr returns a loopback address nothing listens on: toolscout's
// resource URL must be known before it starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// oauthClient connects a go-sdk client that starts with no token and
// signs in with its OAuth handler (authorization code with PKCE; the
// test follows the authorization URL itself, as a browser would).
func oauthClient(t *testing.T, endpoint string) (*mcp.ClientSession, *auth.AuthorizationCodeHandler, error) {
	t.Helper()
	// A transport of its own: the go-sdk's discovery refuses private
	// addresses only on its default one, and everything here is loopback.
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 30 * time.Second}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: "toolscout-test"},
		RedirectURL:         "http://127.0.0.1:1/callback",
		Client:              hc,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			resp, err := noRedirect.Get(args.URL)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || resp.StatusCode != http.StatusFound {
				return nil, fmt.Errorf("authorize: %s, Location %q", resp.Status, resp.Header.Get("Location"))
			}
			return &auth.AuthorizationResult{Code: loc.Query().Get("code"), State: loc.Query().Get("state")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: endpoint, OAuthHandler: h, HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, h, err
}

// postInitialize POSTs an initialize with token ("" : none) and returns
// the status and the WWW-Authenticate header.
func postInitialize(t *testing.T, endpoint, token string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// postCall POSTs a stateless tools/call of name with args and token and
// returns the status and the WWW-Authenticate header.
func postCall(t *testing.T, endpoint, token, name string, args map[string]any) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args,
		"_meta": map[string]any{mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientInfo: map[string]any{"name": "t", "version": "1"}, mcp.MetaKeyClientCapabilities: map[string]any{}}}})
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// TestOAuthProtectedResource: serve --http with toolscout.oauth, in
// front of two real reference servers, an identity provider in the test.
// A go-sdk client with its OAuth handler and no token finds toolscout's
// protected resource metadata from the 401, signs in at the identity
// provider named there, and sees its caller's tools only; a read-only
// token runs only read-only tools; tokens for another audience, expired,
// or without the scopes are refused; no token appears in the log, the
// answers, /metrics or doctor's report.
func TestOAuthProtectedResource(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	nodeClient(t)
	idp := newTestIdP(t)
	dir := t.TempDir()
	root, _ := filepath.Abs("../..")
	npm := func(name string) string { return filepath.Join(root, "node_modules", ".bin", name) }
	if err := os.WriteFile(filepath.Join(dir, "introspect.secret"), []byte(introspectionSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "servers.json")
	// The resource URL names toolscout's address: written for each
	// address serve is started on.
	s := startServeHTTPAt(t, bin, []string{"OLLAMA_HOST=127.0.0.1:9"}, freeAddr, func(addr string) []string {
		cfg := map[string]any{
			"mcpServers": map[string]any{
				"memory":     map[string]any{"command": npm("mcp-server-memory"), "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
				"everything": map[string]any{"command": npm("mcp-server-everything")},
			},
			"toolscout": map[string]any{
				"callers": map[string]any{
					"alice": map[string]any{"jwt_claims": map[string]string{"sub": "alice"}, "allow": []string{"memory"}},
					"bob":   map[string]any{"jwt_claims": map[string]string{"sub": "bob"}, "allow": []string{"everything"}},
				},
				"oauth": map[string]any{"issuer": idp.issuer, "resource": "http://" + addr + "/mcp", "scopes": []string{"tools.read", "tools.run"},
					"introspection": map[string]any{"client_id": "toolscout", "client_secret_file": "introspect.secret"}},
				"audit": "audit.jsonl", "audit_arguments": true,
			},
		}
		js, _ := json.MarshalIndent(cfg, "", "  ")
		if err := os.WriteFile(cfgFile, js, 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{"serve", "--http", addr, "--config", cfgFile, "--embedder", "builtin", "--data-dir", filepath.Join(dir, "data")}
	})
	addr := s.addr
	resource := "http://" + addr + "/mcp"
	s.waitReady(t)
	var seen strings.Builder // every answer, to look for tokens in

	// The metadata, at the path-inserted URL and at the root.
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		code, body := get(t, s.base+p)
		var md oauthex.ProtectedResourceMetadata
		if err := json.Unmarshal([]byte(body), &md); code != http.StatusOK || err != nil {
			t.Fatalf("GET %s = %d %s", p, code, body)
		}
		if md.Resource != resource || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != idp.issuer || strings.Join(md.ScopesSupported, " ") != "tools.read tools.run" {
			t.Errorf("GET %s = %+v, want resource %s, authorization server %s, scopes tools.read tools.run", p, md, resource, idp.issuer)
		}
	}
	// No token: 401 pointing at the metadata, with the scopes.
	code, challenge := postInitialize(t, resource, "")
	wantMeta := fmt.Sprintf(`resource_metadata="http://%s/.well-known/oauth-protected-resource/mcp"`, addr)
	if code != http.StatusUnauthorized || !strings.Contains(challenge, wantMeta) || !strings.Contains(challenge, `scope="tools.read tools.run"`) {
		t.Errorf("POST without a token = %d, WWW-Authenticate %q; want 401 with %s and the scopes", code, challenge, wantMeta)
	}

	// alice signs in through the go-sdk's OAuth handler.
	cs, h, err := oauthClient(t, resource)
	if err != nil {
		t.Fatalf("connect with the OAuth handler: %v\n%s", err, s.logText())
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	contents := toolText(res)
	seen.WriteString(contents)
	if !strings.Contains(contents, `"name":"memory"`) || strings.Contains(contents, "everything") {
		t.Errorf("alice's discover_tools = %s, want memory only", contents)
	}
	for name, args := range map[string]map[string]any{"memory__create_entities": {"entities": []any{}}, "everything__echo": {"message": "hi"}} {
		res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "execute_tool", Arguments: map[string]any{"tool_name": name, "arguments": args}})
		if err != nil {
			t.Fatal(err)
		}
		seen.WriteString(toolText(res))
		if hidden := strings.HasPrefix(name, "everything"); res.IsError != hidden {
			t.Errorf("alice's execute_tool %s: isError %v %s", name, res.IsError, toolText(res))
		}
	}
	ts, _ := h.TokenSource(t.Context())
	aliceTok, err := ts.Token()
	if err != nil || aliceTok.AccessToken == "" {
		t.Fatalf("the handler's token: %v", err)
	}

	// bob, signing in the same way, sees his tools and not alice's.
	idp.user.Store("bob")
	bcs, _, err := oauthClient(t, resource)
	if err != nil {
		t.Fatal(err)
	}
	res, err = bcs.CallTool(t.Context(), &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	seen.WriteString(toolText(res))
	if c := toolText(res); !strings.Contains(c, `"name":"everything"`) || strings.Contains(c, "memory") {
		t.Errorf("bob's discover_tools = %s, want everything only", c)
	}

	// A read-only token (tools.read only) searches and runs read-only
	// tools; a call of another is refused as the specification's scope
	// challenge asks: 403 insufficient_scope naming the scopes that run
	// it and the metadata, with a JSON-RPC error that a client without
	// step-up reads, its session still open.
	readOnly := idp.issue(t, map[string]any{"sub": "alice", "aud": resource, "scope": "tools.read"})
	rcs := connectAs(t, s, readOnly, "")
	for _, c := range []struct {
		tool    string
		refused bool
	}{{"memory__create_entities", true}, {"memory__read_graph", false}, {"create_entities", true}} {
		res, err := rcs.CallTool(t.Context(), &mcp.CallToolParams{Name: "execute_tool", Arguments: map[string]any{"tool_name": c.tool, "arguments": map[string]any{"entities": []any{}}}})
		if c.refused {
			if err == nil || !strings.Contains(err.Error(), "insufficient_scope") || !strings.Contains(err.Error(), "tools.read tools.run") {
				t.Errorf("read-only execute_tool %s = %v, %v; want the insufficient_scope error naming tools.read tools.run", c.tool, res, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("read-only execute_tool %s: %v", c.tool, err)
		}
		seen.WriteString(toolText(res))
		if res.IsError {
			t.Errorf("read-only execute_tool %s = isError %s, want its answer", c.tool, toolText(res))
		}
	}
	code, challenge = postCall(t, resource, readOnly, "execute_tool", map[string]any{"tool_name": "memory__delete_entities", "arguments": map[string]any{"entityNames": []string{}}})
	for _, want := range []string{`error="insufficient_scope"`, `scope="tools.read tools.run"`, wantMeta, "memory__delete_entities"} {
		if code != http.StatusForbidden || !strings.Contains(challenge, want) {
			t.Errorf("read-only POST of execute_tool memory__delete_entities = %d, WWW-Authenticate %q; want 403 with %s", code, challenge, want)
		}
	}

	// The audit trail says who was refused what, as for a tool's refusal.
	auditFile := filepath.Join(dir, "audit.jsonl")
	trail, _ := os.ReadFile(auditFile)
	var refusedLines int
	for _, line := range strings.Split(strings.TrimSpace(string(trail)), "\n") {
		var rec struct{ Caller, Via, Tool, Upstream, Outcome, Error string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Error == "insufficient_scope" {
			refusedLines++
			if rec.Caller != "user:alice" || rec.Via != "execute_tool" || rec.Upstream != "memory" || rec.Outcome != "failure" {
				t.Errorf("audit line of a refusal = %s, want user:alice, execute_tool, memory, failure", line)
			}
		}
	}
	if refusedLines != 3 {
		t.Errorf("the audit trail has %d insufficient_scope lines, want 3 (the refused calls):\n%s", refusedLines, trail)
	}

	// Step-up: alice signs in with tools.read only; her call of a tool
	// that writes is refused, and the go-sdk's OAuth handler signs in
	// again for the scopes of the challenge and sends it again, which
	// runs it.
	idp.user.Store("alice")
	idp.scope.Store("tools.read")
	scs, sh, err := oauthClient(t, resource)
	idp.scope.Store("")
	if err != nil {
		t.Fatal(err)
	}
	if ts, _ := sh.TokenSource(t.Context()); ts != nil {
		if tok, _ := ts.Token(); tok == nil || tok.Extra("scope") != "tools.read" {
			t.Fatalf("the first sign-in got scope %v, want tools.read", tok.Extra("scope"))
		}
	}
	res, err = scs.CallTool(t.Context(), &mcp.CallToolParams{Name: "execute_tool", Arguments: map[string]any{"tool_name": "memory__create_entities",
		"arguments": map[string]any{"entities": []any{map[string]any{"name": "stepped-up", "entityType": "test", "observations": []string{}}}}}})
	if err != nil {
		t.Fatalf("execute_tool after step-up: %v\n%s", err, s.logText())
	}
	seen.WriteString(toolText(res))
	if res.IsError || !strings.Contains(toolText(res), "stepped-up") {
		t.Errorf("execute_tool after step-up = isError %v %s, want the entity created", res.IsError, toolText(res))
	}
	if ts, _ := sh.TokenSource(t.Context()); ts != nil {
		if tok, _ := ts.Token(); tok == nil || !strings.Contains(fmt.Sprint(tok.Extra("scope")), "tools.run") {
			t.Errorf("the token after step-up has scope %v, want tools.run in it", tok.Extra("scope"))
		}
	}

	// Refused: another audience, expired, another issuer's, no scope of
	// toolscout's, not signed by the issuer's key.
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	forged := func() string {
		sig, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: otherKey}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
		tok, _ := jwt.Signed(sig).Claims(map[string]any{"iss": idp.issuer, "sub": "alice", "aud": resource, "scope": "tools.run", "exp": time.Now().Add(time.Hour).Unix()}).Serialize()
		return tok
	}()
	for _, c := range []struct {
		name, token string
		code        int
		errCode     string
	}{
		{"another audience", idp.issue(t, map[string]any{"sub": "alice", "aud": "https://other.example/mcp", "scope": "tools.run"}), http.StatusUnauthorized, "invalid_token"},
		{"expired", idp.issue(t, map[string]any{"sub": "alice", "aud": resource, "scope": "tools.run", "exp": time.Now().Add(-time.Hour).Unix()}), http.StatusUnauthorized, "invalid_token"},
		{"another issuer", idp.issue(t, map[string]any{"iss": "https://evil.example", "sub": "alice", "aud": resource, "scope": "tools.run"}), http.StatusUnauthorized, "invalid_token"},
		{"forged", forged, http.StatusUnauthorized, "invalid_token"},
		{"no scope of toolscout's", idp.issue(t, map[string]any{"sub": "alice", "aud": resource, "scope": "email"}), http.StatusForbidden, "insufficient_scope"},
	} {
		code, challenge := postInitialize(t, resource, c.token)
		if code != c.code || !strings.Contains(challenge, `error="`+c.errCode+`"`) || !strings.Contains(challenge, wantMeta) {
			t.Errorf("%s: POST = %d, WWW-Authenticate %q; want %d with error=%q", c.name, code, challenge, c.code, c.errCode)
		}
	}
	if code, _ := postInitialize(t, resource, aliceTok.AccessToken); code != http.StatusOK {
		t.Errorf("alice's token after the refusals: %d, want 200", code)
	}

	// Opaque tokens, checked by introspection at the endpoint the
	// issuer's metadata names, with toolscout's client secret.
	for _, c := range []struct {
		name   string
		claims map[string]any
		code   int
	}{
		{"active, for toolscout", map[string]any{"sub": "alice", "aud": resource, "scope": "tools.run", "exp": time.Now().Add(time.Hour).Unix()}, http.StatusOK},
		{"revoked", map[string]any{"active": false}, http.StatusUnauthorized},
		{"for another audience", map[string]any{"sub": "alice", "aud": "https://other.example/mcp", "scope": "tools.run"}, http.StatusUnauthorized},
	} {
		if code, _ := postInitialize(t, resource, idp.issueOpaque(c.claims)); code != c.code {
			t.Errorf("opaque token %s: POST = %d, want %d\n%s", c.name, code, c.code, s.logText())
		}
	}

	// No token anywhere: the log, the answers, /metrics, doctor.
	_, scrape := get(t, s.base+"/metrics", "Authorization", "Bearer "+aliceTok.AccessToken)
	if !strings.Contains(scrape, "toolscout_") {
		t.Errorf("/metrics with alice's token: %.200s", scrape)
	}
	doctor, _ := exec.Command(bin, "doctor", "--config", cfgFile, "--embedder", "builtin", "--data-dir", filepath.Join(dir, "data")).CombinedOutput()
	if want := "issuer " + idp.issuer + " publishes 1 key at " + idp.issuer + "/jwks"; !strings.Contains(string(doctor), want) {
		t.Errorf("doctor does not say %q:\n%s", want, doctor)
	}
	// Read once the server has ended: what it logs as its sessions and
	// upstream connections close, and the audit trail's last lines, are
	// in them.
	serveLog := s.stop(t)
	trail, _ = os.ReadFile(auditFile)
	outputs := map[string]string{"log": serveLog, "answers": seen.String(), "/metrics": scrape, "doctor": string(doctor), "audit trail": string(trail)}
	for _, tok := range append(idp.tokens(), forged, introspectionSecret) {
		for where, out := range outputs {
			if strings.Contains(out, tok) || strings.Contains(out, tok[strings.LastIndex(tok, ".")+1:]) {
				t.Errorf("a token (or its signature) is in the %s", where)
			}
		}
	}
	if !strings.Contains(serveLog, "request refused") {
		t.Errorf("the log says nothing of the refusals:\n%s", serveLog)
	}
}

// toolText is the text of a tool result's first content.
func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
