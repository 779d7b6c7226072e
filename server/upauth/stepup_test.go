package upauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/logtest"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/server/gateway"
)

// scopedAS is an authorization server for the step-up tests: the
// preregistered client, a grant at once, and a token per grant
// ("tok-N-secret") that carries the scopes asked for.
type scopedAS struct {
	srv    *httptest.Server
	mu     sync.Mutex
	codes  map[string]string   // code → the scopes asked
	tokens map[string][]string // token → its scopes
	asked  []string            // the scope parameter of each authorization request
	// name prefixes its tokens and registered client ids (dynamic
	// client registration at /register); clients are the client ids
	// seen at /authorize and /token.
	name    string
	clients []string
}

func newScopedAS(t *testing.T) *scopedAS { return newNamedAS(t, "as") }

func newNamedAS(t *testing.T, name string) *scopedAS {
	as := &scopedAS{codes: map[string]string{}, tokens: map[string][]string{}, name: name}
	mux := http.NewServeMux()
	as.srv = httptest.NewServer(mux)
	t.Cleanup(as.srv.Close)
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": as.srv.URL, "authorization_endpoint": as.srv.URL + "/authorize",
			"token_endpoint": as.srv.URL + "/token", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"registration_endpoint": as.srv.URL + "/register"})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var md map[string]any
		json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&md)
		md["client_id"] = as.name + "-client"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(md)
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		as.mu.Lock()
		as.clients = append(as.clients, q.Get("client_id"))
		code := fmt.Sprintf("code-%d", len(as.asked))
		as.codes[code] = q.Get("scope")
		as.asked = append(as.asked, q.Get("scope"))
		as.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		as.mu.Lock()
		scope, ok := as.codes[r.Form.Get("code")]
		as.clients = append(as.clients, r.Form.Get("client_id"))
		tok := fmt.Sprintf("%s-tok-%d-secret", as.name, len(as.tokens))
		if ok {
			as.tokens[tok] = strings.Fields(scope)
		}
		as.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant"}`)
			return
		}
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":600,"scope":%q}`, tok, scope)
	})
	return as
}

// scopesOf returns the scopes of tok (ok false: not a token of as).
func (as *scopedAS) scopesOf(tok string) ([]string, bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	s, ok := as.tokens[tok]
	return s, ok
}

// Asked returns the scope parameter of each authorization request.
func (as *scopedAS) Asked() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return slices.Clone(as.asked)
}

// stepUpMCP serves a go-sdk MCP server with one tool, "write", as a
// server of the MCP authorization spec's step-up flow: initialize and
// notifications need no token; any other request needs a token of as
// with scope "read" (401 `scope="read"` without one); tools/call needs
// scope "write" too (403 insufficient_scope, scope="write"), or, when
// never is set, is refused so whatever the token.
func stepUpMCP(t *testing.T, as *scopedAS, never bool) string {
	return movingMCP(t, func() *scopedAS { return as }, never)
}

// movingMCP is stepUpMCP with the authorization server that current
// returns: its protected resource metadata names it, and only its
// tokens are accepted (SEP-2352: a server that moves to another
// authorization server).
func movingMCP(t *testing.T, current func() *scopedAS, never bool) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Writes."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written"}}}, nil, nil
	})
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	prm := hs.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: hs.URL + "/mcp", AuthorizationServers: []string{current().srv.URL}, ScopesSupported: []string{"read"}}).ServeHTTP(w, r)
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		json.Unmarshal(body, &msg)
		if r.Method != http.MethodPost || msg.Method == "initialize" || strings.HasPrefix(msg.Method, "notifications/") {
			h.ServeHTTP(w, r)
			return
		}
		scopes, ok := current().scopesOf(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if !ok || !slices.Contains(scopes, "read") {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer scope="read", resource_metadata=%q`, prm))
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		if msg.Method == "tools/call" && (never || !slices.Contains(scopes, "write")) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="write", resource_metadata=%q, error_description="needs write"`, prm))
			http.Error(w, `{"error":"insufficient_scope"}`, http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
	return hs.URL + "/mcp"
}

// stepUpGateway starts a gateway with upstream "remote" at u, signed in
// through st, its log into logs (redacted as serve's is).
func stepUpGateway(t *testing.T, st *Store, u string, logs *logtest.Buffer) *gateway.Gateway {
	secrets := redact.New()
	log := slog.New(secrets.Handler(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	g := gateway.New(gateway.Options{Logger: log, Upstreams: []gateway.UpstreamConfig{{Domain: "remote", URL: u, Transport: "http",
		ConnectTimeout: 20 * time.Second, Auth: NewSource(st, "remote", u, nil, secrets.Add).WithLog(log)}}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	g.Start(t.Context())
	t.Cleanup(g.Close)
	g.WaitReady(ctx)
	return g
}

var writeTool = &index.Tool{Domain: "remote", Name: "write", QualifiedName: "remote__write"}

// TestStepUp: a server that lets initialize through without a token and
// asks for scope "write" only at tools/call. auth login gets the first
// challenge from tools/list (scope read); the call's 403 makes the
// upstream need a sign-in naming the scope and the command, recorded in
// the credentials file without a secret; the next login asks for read
// and write; then the call works on the same gateway.
func TestStepUp(t *testing.T) {
	as := newScopedAS(t)
	u := stepUpMCP(t, as, false)
	st := OpenStore(filepath.Join(t.TempDir(), FileName))
	var out strings.Builder
	login := func() error {
		_, err := Login(t.Context(), LoginOptions{Server: "remote", URL: u, ClientID: "preregistered", Store: st, Open: browser(t), Out: &out})
		return err
	}
	if err := login(); err != nil {
		t.Fatalf("Login at a server whose initialize needs no token: %v", err)
	}
	if got := as.Asked(); !slices.Equal(got, []string{"read"}) {
		t.Fatalf("authorization requests asked scopes %q, want [read] (tools/list's challenge)", got)
	}
	var logs logtest.Buffer
	g := stepUpGateway(t, st, u, &logs)
	if s := g.Upstreams().Status()[0]; s.State != "up" {
		t.Fatalf("upstream %s: %v", s.State, s.Err)
	}
	_, err := g.Execute(t.Context(), &mcp.CallToolRequest{}, writeTool, map[string]any{})
	if !errors.Is(err, gateway.ErrSignIn) || !strings.Contains(err.Error(), "scopes write") || !strings.Contains(err.Error(), "toolscout auth login remote") {
		t.Fatalf("call refused 403 insufficient_scope = %v; want ErrSignIn naming scope write and the command", err)
	}
	e, _ := st.Get("remote")
	if c := e.Challenge; c == nil || c.Status != http.StatusForbidden || c.Error != "insufficient_scope" || !slices.Equal(c.Scopes, []string{"write"}) ||
		!strings.HasSuffix(c.ResourceMetadata, "/.well-known/oauth-protected-resource/mcp") {
		t.Fatalf("recorded challenge = %+v, want 403 insufficient_scope, scopes [write], the metadata URL", e.Challenge)
	}
	// Until the new sign-in, the upstream is not sent the refused token again.
	if _, err := g.Execute(t.Context(), &mcp.CallToolRequest{}, writeTool, map[string]any{}); !errors.Is(err, gateway.ErrSignIn) {
		t.Errorf("second call before a new sign-in = %v, want ErrSignIn", err)
	}

	if err := login(); err != nil {
		t.Fatalf("step-up Login: %v", err)
	}
	if got := as.Asked(); len(got) != 2 || !slices.Equal(slices.Sorted(slices.Values(strings.Fields(got[1]))), []string{"read", "write"}) {
		t.Fatalf("authorization requests asked scopes %q, want the second for read and write (the union)", got)
	}
	e, _ = st.Get("remote")
	if e.Challenge != nil || e.StepUp == nil || e.StepUp.SignIns != 1 {
		t.Errorf("entry after the step-up: challenge %+v, step-up %+v; want the challenge cleared, one step-up", e.Challenge, e.StepUp)
	}
	res, err := g.Execute(t.Context(), &mcp.CallToolRequest{}, writeTool, map[string]any{})
	if err != nil || res.IsError {
		t.Fatalf("call after the step-up = %v, %v; want it served", res, err)
	}
	g.Close() // it may log as its session closes: read the log after (issue 47)
	leaked(t, as, err, out.String(), logs.String())
}

// TestStepUpLimit: a server that refuses every token at tools/call with
// 403 insufficient_scope. auth login signs in for the challenge at most
// MaxStepUps times, then refuses with ErrStepUpLimit, saying so and how
// to start over, without an authorization request.
func TestStepUpLimit(t *testing.T) {
	as := newScopedAS(t)
	u := stepUpMCP(t, as, true)
	st := OpenStore(filepath.Join(t.TempDir(), FileName))
	var out strings.Builder
	var logs logtest.Buffer
	var err error
	for i := 0; i < 10; i++ {
		if _, err = Login(t.Context(), LoginOptions{Server: "remote", URL: u, ClientID: "preregistered", Store: st, Open: browser(t), Out: &out}); err != nil {
			break
		}
		g := stepUpGateway(t, st, u, &logs)
		_, cerr := g.Execute(t.Context(), &mcp.CallToolRequest{}, writeTool, map[string]any{})
		g.Close()
		if !errors.Is(cerr, gateway.ErrSignIn) {
			t.Fatalf("call %d = %v, want ErrSignIn", i, cerr)
		}
		if i == MaxStepUps && (!strings.Contains(cerr.Error(), "will not ask for them again") || strings.Contains(cerr.Error(), "sign in again")) {
			t.Errorf("the last refusal = %v, want it to say the limit is reached", cerr)
		}
	}
	if !errors.Is(err, ErrStepUpLimit) || !strings.Contains(err.Error(), "toolscout auth logout remote") {
		t.Fatalf("Login after repeated refusals = %v, want ErrStepUpLimit and how to start over", err)
	}
	if n := len(as.Asked()); n != 1+MaxStepUps {
		t.Errorf("%d authorization requests, want %d (the sign-in and %d step-ups)", n, 1+MaxStepUps, MaxStepUps)
	}
	leaked(t, as, err, out.String(), logs.String())
}

// leaked fails t when any token of as appears in err or the outputs.
func leaked(t *testing.T, as *scopedAS, err error, outs ...string) {
	t.Helper()
	if err != nil {
		outs = append(outs, err.Error())
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	for tok := range as.tokens {
		for _, o := range outs {
			if strings.Contains(o, tok) {
				t.Errorf("token %s appears in the output: %s", tok, o)
			}
		}
	}
}

// TestReregisterOnASChange (SEP-2352): the server moves to another
// authorization server mid-session and refuses the first one's token
// (401). The refusal is recorded; the next sign-in discovers the new
// authorization server from the protected resource metadata and
// registers there, never presenting the first one's client; the call
// then works on the same gateway.
func TestReregisterOnASChange(t *testing.T) {
	as1, as2 := newNamedAS(t, "as1"), newNamedAS(t, "as2")
	var mu sync.Mutex
	current := as1
	u := movingMCP(t, func() *scopedAS { mu.Lock(); defer mu.Unlock(); return current }, false)
	st := OpenStore(filepath.Join(t.TempDir(), FileName))
	var out strings.Builder
	login := func() error {
		_, err := Login(t.Context(), LoginOptions{Server: "remote", URL: u, Scopes: []string{"read", "write"}, Store: st, Open: browser(t), Out: &out})
		return err
	}
	if err := login(); err != nil {
		t.Fatalf("Login: %v", err)
	}
	var logs logtest.Buffer
	g := stepUpGateway(t, st, u, &logs)
	if res, err := g.Execute(t.Context(), &mcp.CallToolRequest{}, writeTool, map[string]any{}); err != nil || res.IsError {
		t.Fatalf("call before the move = %v, %v", res, err)
	}
	mu.Lock()
	current = as2
	mu.Unlock()
	_, err := g.Execute(t.Context(), &mcp.CallToolRequest{}, writeTool, map[string]any{})
	if !errors.Is(err, gateway.ErrSignIn) || !strings.Contains(err.Error(), "toolscout auth login remote") || strings.Contains(err.Error(), "expired") {
		t.Fatalf("call after the move = %v; want ErrSignIn with the command, not called expired", err)
	}
	if e, _ := st.Get("remote"); e.Challenge == nil || e.Challenge.Status != http.StatusUnauthorized || !strings.HasSuffix(e.Challenge.ResourceMetadata, "/.well-known/oauth-protected-resource/mcp") {
		t.Fatalf("recorded challenge = %+v, want the 401 and the metadata URL", e.Challenge)
	}
	if err := login(); err != nil {
		t.Fatalf("Login after the move: %v", err)
	}
	as2.mu.Lock()
	clients := slices.Clone(as2.clients)
	as2.mu.Unlock()
	if len(clients) == 0 || slices.Contains(clients, "as1-client") {
		t.Errorf("clients seen at the new authorization server = %q, want its own registration only", clients)
	}
	if res, err := g.Execute(t.Context(), &mcp.CallToolRequest{}, writeTool, map[string]any{}); err != nil || res.IsError {
		t.Fatalf("call after the new sign-in = %v, %v", res, err)
	}
	g.Close() // it may log as its session closes: read the log after (issue 47)
	leaked(t, as1, nil, out.String(), logs.String())
	leaked(t, as2, nil, out.String(), logs.String())
}
