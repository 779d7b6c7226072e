package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/upauth"
)

// oauthWorld is an upstream MCP server behind the go-sdk's bearer
// middleware, whose tokens come from a token endpoint that refreshes
// them (issuing the next token and revoking the one before it).
type oauthWorld struct {
	mu        sync.Mutex
	valid     map[string]bool
	refresh   string
	expiresIn int // seconds, of the tokens the endpoint issues

	upstream, tokenURL string
	refreshes          atomic.Int64
	refused            atomic.Int64 // 401s the upstream answered
	refuseGrant        atomic.Bool
}

func newOAuthWorld(t *testing.T) *oauthWorld {
	w := &oauthWorld{valid: map[string]bool{"tok-0-secret": true}, refresh: "ref-0-secret", expiresIn: 3600}
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ping", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.valid[tok] {
			w.refused.Add(1)
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "toolscout", Expiration: time.Now().Add(time.Hour)}, nil
	}
	mw := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: "http://127.0.0.1/.well-known/oauth-protected-resource"})
	up := httptest.NewServer(mw(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)))
	t.Cleanup(up.Close)
	te := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.mu.Lock()
		defer w.mu.Unlock()
		rw.Header().Set("Content-Type", "application/json")
		if w.refuseGrant.Load() || r.Form.Get("refresh_token") != w.refresh {
			rw.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(rw, `{"error":"invalid_grant","error_description":"revoked %s"}`, r.Form.Get("refresh_token"))
			return
		}
		n := w.refreshes.Add(1)
		clear(w.valid)
		tok := fmt.Sprintf("tok-%d-secret", n)
		w.valid[tok] = true
		w.refresh = fmt.Sprintf("ref-%d-secret", n)
		fmt.Fprintf(rw, `{"access_token":%q,"token_type":"Bearer","expires_in":%d,"refresh_token":%q}`, tok, w.expiresIn, w.refresh)
	}))
	t.Cleanup(te.Close)
	w.upstream, w.tokenURL = up.URL, te.URL
	return w
}

func (w *oauthWorld) revoke() {
	w.mu.Lock()
	clear(w.valid)
	w.mu.Unlock()
}

// TestUpstreamOAuth: the gateway sends an OAuth upstream its token,
// refreshes it after a 401 (and retries the call) and before it expires,
// and, when the refresh is refused, says the upstream needs a new
// sign-in, without a loop and without a token in any error or log line.
func TestUpstreamOAuth(t *testing.T) {
	w := newOAuthWorld(t)
	st := upauth.OpenStore(filepath.Join(t.TempDir(), upauth.FileName))
	if err := st.Put("remote", &upauth.Entry{URL: w.upstream, TokenURL: w.tokenURL, AuthStyle: 1, ClientID: "toolscout",
		AccessToken: "tok-0-secret", RefreshToken: "ref-0-secret", TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := t.Context()
	g := New(Options{Logger: log, Upstreams: []UpstreamConfig{{Domain: "remote", URL: w.upstream, Transport: "http", ConnectTimeout: 10 * time.Second,
		Auth: upauth.NewSource(st, "remote", w.upstream, nil, nil)}}})
	g.Start(ctx)
	t.Cleanup(g.Close)
	g.WaitReady(ctx)
	if s := g.Upstreams().Status()[0]; s.State != "up" {
		t.Fatalf("status = %s %v, want up with the stored token", s.State, s.Err)
	}
	tool := &index.Tool{Domain: "remote", Name: "ping", QualifiedName: "remote__ping"}
	ping := func() error {
		_, err := g.Execute(ctx, &mcp.CallToolRequest{}, tool, map[string]any{})
		return err
	}
	var errs []string

	// The upstream stops taking the token: one refresh, the call retried.
	w.revoke()
	if err := ping(); err != nil {
		t.Fatalf("ping after the token was revoked upstream: %v, want a refresh and a retry", err)
	}
	if n := w.refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes after a 401, want 1", n)
	}

	// Short-lived tokens: refreshed before they expire, no 401 first.
	w.mu.Lock()
	w.expiresIn = 5
	w.mu.Unlock()
	w.revoke()
	if err := ping(); err != nil { // refresh 2 issues a 5 s token
		t.Fatal(err)
	}
	refused := w.refused.Load()
	if err := ping(); err != nil { // within 30 s of expiry: refresh 3 first
		t.Fatal(err)
	}
	if n, r := w.refreshes.Load(), w.refused.Load(); n != 3 || r != refused {
		t.Errorf("after a call with a token 5 s from expiry: %d refreshes, %d new 401s; want 3 and none", n, r-refused)
	}

	// The grant is revoked: the upstream needs a new sign-in, said so,
	// and the token endpoint is not asked again and again.
	w.refuseGrant.Store(true)
	w.revoke()
	before := w.refreshes.Load()
	for range 3 {
		err := ping()
		if err == nil || !errors.Is(err, ErrSignIn) || !strings.Contains(err.Error(), "sign in again with toolscout auth login remote") {
			t.Fatalf("ping with a revoked grant: %v, want ErrSignIn saying to sign in again", err)
		}
		errs = append(errs, err.Error())
	}
	if n := w.refreshes.Load(); n != before {
		t.Errorf("%d refreshes succeeded with a revoked grant", n-before)
	}
	// Read once the gateway has closed its session, which may log too
	// (issue 47).
	g.Close()
	logMu.Lock()
	all := logs.String() + strings.Join(errs, "\n")
	logMu.Unlock()
	if strings.Contains(all, "-secret") {
		t.Errorf("a token in the log or an error:\n%s", all)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
