package gateway

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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/echoupstream"
	"github.com/toolscout/toolscout/internal/logtest"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/server/callers"
)

// authUpstream serves an MCP server with one tool over Streamable HTTP,
// answering 401 to a request whose Authorization is not "Bearer " +
// *want.
func authUpstream(t *testing.T, want *atomic.Value) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ping", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+want.Load().(string) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="remote"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestUpstreamUnauthorized: an upstream that refuses toolscout's
// credentials, at connect or later at a call, is named with its 401 and
// what to check, not an SDK's transport error.
func TestUpstreamUnauthorized(t *testing.T) {
	var want atomic.Value
	want.Store("good-token")
	url := authUpstream(t, &want)
	ctx := t.Context()

	// Refused at connect.
	bad := New(Options{Upstreams: []UpstreamConfig{{Domain: "remote", URL: url, Transport: "http", Headers: map[string]string{"Authorization": "Bearer wrong"}, ConnectTimeout: 5 * time.Second}}})
	bad.Start(ctx)
	t.Cleanup(bad.Close)
	bad.WaitReady(ctx)
	st := bad.Upstreams().Status()[0]
	if st.State == "up" || st.Err == nil || !strings.Contains(st.Err.Error(), "401") || !strings.Contains(st.Err.Error(), "credentials") {
		t.Errorf("status = %s %v, want down with a 401 that names the credentials", st.State, st.Err)
	}

	// Refused at a call, once the upstream no longer takes the token.
	good := New(Options{Upstreams: []UpstreamConfig{{Domain: "remote", URL: url, Transport: "http", Headers: map[string]string{"Authorization": "Bearer good-token"}, ConnectTimeout: 5 * time.Second}}})
	good.Start(ctx)
	t.Cleanup(good.Close)
	good.WaitReady(ctx)
	if st := good.Upstreams().Status()[0]; st.State != "up" {
		t.Fatalf("status = %s %v, want up", st.State, st.Err)
	}
	tool := &index.Tool{Domain: "remote", Name: "ping", QualifiedName: "remote__ping"}
	if _, err := good.Execute(ctx, &mcp.CallToolRequest{}, tool, map[string]any{}); err != nil {
		t.Fatalf("ping: %v", err)
	}
	want.Store("rotated-token")
	_, err := good.Execute(ctx, &mcp.CallToolRequest{}, tool, map[string]any{})
	if err == nil || !strings.Contains(err.Error(), `"remote"`) || !strings.Contains(err.Error(), "401") || !errors.Is(err, ErrUnauthorized) {
		t.Errorf("ping after the upstream's token changed: %v, want an ErrUnauthorized naming remote and its 401", err)
	}
}

// TestCallerHeaders: a call by a caller the config maps carries that
// caller's headers and none of the config's Headers (issue 52, item 8:
// it also carried the shared X-Api-Key); with ForwardAuthorization, the
// caller's own Authorization in place of the config's, with the rest of
// Headers; otherwise, and when listing tools, the config's Headers. A
// caller's credential is never forwarded by default.
func TestCallerHeaders(t *testing.T) {
	var calls atomic.Value // the Authorization and X-Api-Key of the last tools/call
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			calls.Store([2]string{r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")})
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	ctx := t.Context()
	tool := &index.Tool{Domain: "remote", Name: "whoami", QualifiedName: "remote__whoami"}
	from := func(caller, authorization string) *mcp.CallToolRequest {
		req := &mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: http.Header{}}}
		if caller != "" {
			req.Extra.TokenInfo = &auth.TokenInfo{UserID: caller}
		}
		if authorization != "" {
			req.Extra.Header.Set("Authorization", authorization)
		}
		return req
	}
	set, err := callers.New(callers.Options{Callers: []callers.Config{{Name: "ops", Tokens: []string{"ops-token-0123456789abcdef"}, Allow: []string{"*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	opsMapped := map[string]map[string]string{"ops": {"Authorization": "Bearer ops-upstream"}}
	for _, tc := range []struct {
		name    string
		cfg     UpstreamConfig
		req     *mcp.CallToolRequest
		wantHdr string
		wantKey string // the X-Api-Key the call carried; the config's is "shared"
		stdio   bool   // the caller is the view's (stdio: TOOLSCOUT_CALLER), not a token's
	}{
		{"default: never forwarded", UpstreamConfig{}, from("ops", "Bearer callers-own"), "Bearer static", "shared", false},
		{"mapped caller", UpstreamConfig{CallerHeaders: opsMapped}, from("ops", "Bearer callers-own"), "Bearer ops-upstream", "", false},
		{"mapped caller naming the key", UpstreamConfig{CallerHeaders: map[string]map[string]string{"ops": {"Authorization": "Bearer ops-upstream", "X-Api-Key": "ops-key"}}}, from("ops", "Bearer callers-own"), "Bearer ops-upstream", "ops-key", false},
		{"caller not mapped", UpstreamConfig{CallerHeaders: opsMapped}, from("bot", "Bearer callers-own"), "Bearer static", "shared", false},
		{"forwarded", UpstreamConfig{ForwardAuthorization: true}, from("bot", "Bearer callers-own"), "Bearer callers-own", "shared", false},
		{"forwarded, none sent", UpstreamConfig{ForwardAuthorization: true}, from("", ""), "Bearer static", "shared", false},
		{"mapped wins over forwarded", UpstreamConfig{ForwardAuthorization: true, CallerHeaders: opsMapped}, from("ops", "Bearer callers-own"), "Bearer ops-upstream", "", false},
		{"mapped stdio caller", UpstreamConfig{CallerHeaders: opsMapped}, &mcp.CallToolRequest{}, "Bearer ops-upstream", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Domain, cfg.URL, cfg.Transport, cfg.ConnectTimeout = "remote", hs.URL, "http", 5*time.Second
			cfg.Headers = map[string]string{"Authorization": "Bearer static", "X-Api-Key": "shared"}
			g := New(Options{Upstreams: []UpstreamConfig{cfg}})
			g.Start(ctx)
			t.Cleanup(g.Close)
			g.WaitReady(ctx)
			calls.Store([2]string{})
			cctx := ctx
			if tc.stdio {
				cctx = callers.WithCaller(ctx, set.Caller("ops"))
			}
			if _, err := g.Execute(cctx, tc.req, tool, map[string]any{}); err != nil {
				t.Fatal(err)
			}
			got := calls.Load().([2]string)
			if got[0] != tc.wantHdr {
				t.Errorf("the call carried Authorization %q, want %q", got[0], tc.wantHdr)
			}
			if got[1] != tc.wantKey {
				t.Errorf("the call carried X-Api-Key %q, want %q", got[1], tc.wantKey)
			}
		})
	}
}

// echoSecret is the credential toolscout sends the echoing upstream.
const echoSecret = "Bearer s3cret-upstream-token-0123456789"

// echoUpstream serves echoupstream.Handler(refuse).
func echoUpstream(t *testing.T, refuse string) string {
	t.Helper()
	hs := httptest.NewServer(echoupstream.Handler(refuse))
	t.Cleanup(hs.Close)
	return hs.URL
}

// leaked returns the forms of echoSecret that s holds.
func leaked(s string) []string {
	var out []string
	for _, form := range []string{echoSecret, strings.TrimPrefix(echoSecret, "Bearer ")} {
		if strings.Contains(s, form) {
			out = append(out, form)
		}
	}
	return out
}

// TestUpstreamRefusalQuotesNoCredential (issue 52): a server that
// refuses toolscout's credentials with a WWW-Authenticate echoing them
// (401 error_description, 403 scope), at connect or at a call, is
// named with its status, scheme, realm and error code, and nothing of
// what it was sent: without a Redactor, the challenge is parsed.
func TestUpstreamRefusalQuotesNoCredential(t *testing.T) {
	ctx := t.Context()
	headers := map[string]string{"Authorization": echoSecret}
	for _, tc := range []struct {
		name, refuse, tool string
		want               []string
	}{
		{"401 at connect", "401", "", []string{"HTTP 401 Unauthorized", `Bearer realm="up", error="invalid_token"`}},
		{"403 at connect", "403", "", []string{"HTTP 403 Forbidden", `Bearer realm="up", error="insufficient_scope"`}},
		{"401 at a call", "", "refuse401", []string{"HTTP 401 Unauthorized", `Bearer realm="up", error="invalid_token"`}},
		{"403 at a call", "", "refuse403", []string{"HTTP 403 Forbidden", `Bearer realm="up", error="insufficient_scope"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logtest.Buffer
			g := New(Options{Upstreams: []UpstreamConfig{{Domain: "remote", URL: echoUpstream(t, tc.refuse), Transport: "http", Headers: headers, ConnectTimeout: 5 * time.Second}},
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			g.Start(ctx)
			t.Cleanup(g.Close)
			g.WaitReady(ctx)
			var said []string
			if tc.tool == "" {
				st := g.Upstreams().Status()[0]
				if st.Err == nil || !errors.Is(st.Err, ErrUnauthorized) {
					t.Fatalf("status = %s %v, want an ErrUnauthorized", st.State, st.Err)
				}
				said = append(said, st.Err.Error(), g.Directory().Unavailable()["remote"])
				_, err := g.Execute(ctx, &mcp.CallToolRequest{}, &index.Tool{Domain: "remote", Name: "whoami", QualifiedName: "remote__whoami"}, map[string]any{})
				said = append(said, fmt.Sprint(err))
			} else {
				_, err := g.Execute(ctx, &mcp.CallToolRequest{}, &index.Tool{Domain: "remote", Name: tc.tool, QualifiedName: "remote__" + tc.tool}, map[string]any{})
				if !errors.Is(err, ErrUnauthorized) {
					t.Fatalf("%s: %v, want an ErrUnauthorized", tc.tool, err)
				}
				said = append(said, err.Error())
			}
			// Read once the gateway has closed its session, which may
			// log too (issue 47).
			g.Close()
			said = append(said, logs.String())
			for _, s := range said {
				if l := leaked(s); l != nil {
					t.Errorf("the credential is quoted (%q):\n%s", l, s)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(said[0], w) {
					t.Errorf("%s\ndoes not say %s", said[0], w)
				}
			}
		})
	}
}

// TestUpstreamEchoRedacted (issue 52): with a Redactor that knows the
// credential, nothing the server sends back reaches an answer, a status,
// the tools listed or a log line with it: a JSON-RPC error of a call, a
// 500's JSON-RPC error body, a tool result (text and structured), the
// tools' descriptions and schemas, the server's instructions; nor does a
// caller's own Authorization forwarded to it.
func TestUpstreamEchoRedacted(t *testing.T) {
	ctx := t.Context()
	var logs logtest.Buffer
	cfg := UpstreamConfig{Domain: "remote", URL: echoUpstream(t, ""), Transport: "http", Headers: map[string]string{"Authorization": echoSecret}, ConnectTimeout: 5 * time.Second}
	fwd := cfg
	fwd.Domain, fwd.ForwardAuthorization = "forwarded", true
	g := New(Options{Upstreams: []UpstreamConfig{cfg, fwd}, Redactor: redact.New(echoSecret),
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	g.Start(ctx)
	t.Cleanup(g.Close)
	g.WaitReady(ctx)
	if st := g.Upstreams().Status()[0]; st.State != "up" {
		t.Fatalf("status = %s %v, want up", st.State, st.Err)
	}
	var said []string
	listed, _ := json.Marshal(g.Specs())
	said = append(said, string(listed), fmt.Sprint(g.Directory().Instructions()))
	if !strings.Contains(string(listed), `it was sent: [redacted]`) {
		t.Errorf("the tools listed lost their descriptions: %s", listed)
	}
	const jwt = "eyJhbGciOiJFUzI1NiJ9.callers-own-jwt.signature"
	for _, tc := range []struct {
		domain, tool string
		req          *mcp.CallToolRequest
		fails        bool
	}{
		{"remote", "whoami", &mcp.CallToolRequest{}, false},
		{"remote", "rpc", &mcp.CallToolRequest{}, true},
		{"remote", "boom", &mcp.CallToolRequest{}, true},
		{"remote", "bad", &mcp.CallToolRequest{}, true},
		{"forwarded", "whoami", &mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: http.Header{"Authorization": {"Bearer " + jwt}}}}, false},
		{"forwarded", "rpc", &mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: http.Header{"Authorization": {"Bearer " + jwt}}}}, true},
	} {
		res, err := g.Execute(ctx, tc.req, &index.Tool{Domain: tc.domain, Name: tc.tool, QualifiedName: tc.domain + "__" + tc.tool}, map[string]any{})
		if (err != nil) != tc.fails {
			t.Errorf("%s %s: %v, want failing %v", tc.domain, tc.tool, err, tc.fails)
		}
		b, _ := json.Marshal(res)
		said = append(said, fmt.Sprint(err), string(b))
		if !tc.fails && !strings.Contains(string(b), `"you sent [redacted]"`) {
			t.Errorf("%s %s = %s, want the echo redacted", tc.domain, tc.tool, b)
		}
		if tc.fails && tc.tool != "boom" && (err == nil || !strings.Contains(err.Error(), "[redacted]")) {
			t.Errorf("%s %s: %v, want the echo redacted", tc.domain, tc.tool, err)
		}
	}
	// Read once the gateway has closed its sessions, the forwarded
	// caller's too, which may log (issue 47).
	g.Close()
	said = append(said, logs.String())
	for _, s := range said {
		if l := leaked(s); l != nil || strings.Contains(s, jwt) {
			t.Errorf("a credential is quoted (%q):\n%s", l, s)
		}
	}
}
