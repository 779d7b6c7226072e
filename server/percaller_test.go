package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/gateway"
)

const (
	ownUpToken   = "toolscout-own-upstream-token-0123456789"
	aliceToken   = "alice-caller-token-0123456789abcdef"
	bobToken     = "bob-caller-token-0123456789abcdef"
	malloryToken = "mallory-caller-token-0123456789abcdef" // a caller of toolscout's the upstream does not know
)

// identityUpstream is a remote MCP server (go-sdk, Streamable HTTP) that
// accepts only the bearer tokens it knows, and whose whoami tool answers
// with the identity of the token its request carried. sessions counts
// the sessions opened by each identity.
type identityUpstream struct {
	url      string
	mu       sync.Mutex
	sessions map[string]int
}

func startIdentityUpstream(t *testing.T) *identityUpstream {
	t.Helper()
	known := map[string]string{ownUpToken: "toolscout", aliceToken: "alice", bobToken: "bob"}
	who := func(h http.Header) string {
		tok, _ := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
		return known[tok]
	}
	u := &identityUpstream{sessions: map[string]int{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "identity", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "whoami", Description: "Say which user the request is made as.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are " + who(req.Extra.Header)}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := who(r.Header)
		if id == "" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unknown token", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"method":"initialize"`)) {
				u.mu.Lock()
				u.sessions[id]++
				u.mu.Unlock()
			}
		}
		h.ServeHTTP(w, r)
	}))
	// A session left open (a bug here) must fail the test, not hang it.
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	u.url = hs.URL
	return u
}

// staticToken is toolscout's own credential for the upstream (what
// `toolscout auth login` gives in serve): the shared session lists with it.
type staticToken string

func (s staticToken) Token(context.Context) (string, error) { return string(s), nil }
func (s staticToken) Refresh(context.Context, string) (string, error) {
	return "", fmt.Errorf("%w: a static token", gateway.ErrSignIn)
}

// serveIdentityGateway serves the identity upstream through toolscout
// over HTTP, with callers alice, bob and mallory (by bearer token); it
// returns the server's URL and its log.
func serveIdentityGateway(t *testing.T, identity string) (string, *identityUpstream, *servedLog, *Metrics) {
	t.Helper()
	up := startIdentityUpstream(t)
	set, err := callers.New(callers.Options{Callers: []callers.Config{
		{Name: "alice", Tokens: []string{aliceToken}, Allow: []string{"*"}},
		{Name: "bob", Tokens: []string{bobToken}, Allow: []string{"*"}},
		{Name: "mallory", Tokens: []string{malloryToken}, Allow: []string{"*"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	url, logs, metrics := serveOneUpstream(t, gateway.UpstreamConfig{Domain: "id", URL: up.url, Transport: "http", Auth: staticToken(ownUpToken), CallerIdentity: identity}, set, nil, ownUpToken)
	return url, up, logs, metrics
}

// servedLog is the log of a server a test runs; final stops the
// server and returns all it logged.
type servedLog struct {
	*logBuffer
	stop func()
}

// final ends the server (its HTTP connections, then its upstream
// sessions, the callers' too, and its index) and returns its whole log:
// a check that a secret is absent reads this, which holds what is
// logged as the sessions close (issue 47).
func (l *servedLog) final() string {
	l.stop()
	return l.String()
}

// serveOneUpstream serves the one upstream u (domain "id", with an
// id__whoami tool) through toolscout over HTTP for callers set, with
// secrets redacted from the log and opts (may be nil) changing the
// server's options; it returns the server's URL, its log and metrics.
func serveOneUpstream(t *testing.T, u gateway.UpstreamConfig, set *callers.Set, opts func(*Options), secrets ...string) (string, *servedLog, *Metrics) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := store.Open("")
	if err != nil {
		t.Fatal(err)
	}
	live, _, err := search.Open(ctx, search.LiveOptions{Store: st, Embedder: embed.NewBuiltin(embed.BuiltinOptions{})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	gw := gateway.New(gateway.Options{
		Upstreams:     []gateway.UpstreamConfig{u},
		Logger:        logs.logger(),
		Redactor:      redact.New(secrets...),
		WordFrequency: search.WordFrequency,
	})
	live.Follow(ctx, gw, search.FollowOptions{})
	metrics := NewMetrics()
	o := Options{Live: live, Executor: gw, Callers: set, Metrics: metrics, Logger: logs.logger()}
	if opts != nil {
		opts(&o)
	}
	srv := New(o)
	gw.Start(ctx)
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	var once sync.Once
	stop := func() {
		once.Do(func() {
			hs.CloseClientConnections()
			hs.Close()
			gw.Close()
			live.Close()
		})
	}
	t.Cleanup(stop)
	waitFor(t, "the "+u.Domain+" server's tools", func() bool { return srv.eng.Catalog().Tool(u.Domain+"__whoami") != nil })
	return hs.URL, &servedLog{logBuffer: logs, stop: stop}, metrics
}

func whoami(t *testing.T, url, token string) (string, bool) {
	t.Helper()
	cs := connectURL(t, url, &http.Client{Transport: bearerRT(token)}, "2025-11-25")
	res := call(t, cs, ExecuteTool, map[string]any{"tool_name": "id__whoami"})
	return text(res), res.IsError
}

// TestCallerIdentityForward: with identity "caller" (forward), each of
// two callers runs the upstream's tool as itself, on a session of its
// own; a caller the upstream does not know is refused by it with a clear
// error; the tools are still listed once, with toolscout's own
// credential. No token of a caller's appears in the log, an answer or
// /metrics.
func TestCallerIdentityForward(t *testing.T) {
	t.Parallel()
	url, up, logs, metrics := serveIdentityGateway(t, gateway.IdentityForward)
	var out strings.Builder
	for _, tc := range []struct{ token, want string }{{aliceToken, "you are alice"}, {bobToken, "you are bob"}, {aliceToken, "you are alice"}} {
		got, isErr := whoami(t, url, tc.token)
		out.WriteString(got)
		if isErr || got != tc.want {
			t.Errorf("whoami as %.5s: %q (error %v), want %q", tc.token, got, isErr, tc.want)
		}
	}
	got, isErr := whoami(t, url, malloryToken)
	out.WriteString(got)
	if !isErr || !strings.Contains(got, `server "id" refused the caller's own credentials`) {
		t.Errorf("whoami as mallory: %q (error %v), want the upstream's refusal of the caller's credentials", got, isErr)
	}
	// One session per caller, kept across its calls (and its clients'
	// sessions with toolscout); the shared one lists.
	up.mu.Lock()
	opened := fmt.Sprint(up.sessions)
	up.mu.Unlock()
	if opened != "map[alice:1 bob:1 toolscout:1]" {
		t.Errorf("upstream sessions opened by identity: %s, want one each of alice, bob and toolscout", opened)
	}
	// The listing is toolscout's: its tools/list never carries a caller's token.
	cs := connectURL(t, url, &http.Client{Transport: bearerRT(bobToken)}, "2025-11-25")
	lr, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out.WriteString(fmt.Sprint(lr))
	scrape := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	metrics.Handler().ServeHTTP(scrape, req)
	body, _ := io.ReadAll(scrape.Result().Body)
	out.Write(body)
	out.WriteString(logs.final())
	for _, tok := range []string{aliceToken, bobToken, malloryToken, ownUpToken} {
		if strings.Contains(out.String(), tok) {
			t.Errorf("token %.8s… appears in an answer, the log or /metrics", tok)
		}
	}
}

// TestCallerIdentityNotByDefault: without identity "caller" no caller's
// token goes upstream: every call runs as toolscout's own credential.
func TestCallerIdentityNotByDefault(t *testing.T) {
	t.Parallel()
	url, _, _, _ := serveIdentityGateway(t, "")
	for _, tok := range []string{aliceToken, bobToken} {
		if got, isErr := whoami(t, url, tok); isErr || got != "you are toolscout" {
			t.Errorf("whoami as %.5s without caller identity: %q (error %v), want %q", tok, got, isErr, "you are toolscout")
		}
	}
}

// TestCallerIdentityNoToken: a call without a caller's bearer token (in
// process, as code mode or stdio makes) is refused with what to do,
// never sent with toolscout's own credential.
func TestCallerIdentityNoToken(t *testing.T) {
	t.Parallel()
	up := startIdentityUpstream(t)
	env := startGateway(t, []gateway.UpstreamConfig{{Domain: "id", URL: up.url, Transport: "http", Auth: staticToken(ownUpToken), CallerIdentity: gateway.IdentityForward}}, Exposure{Mode: ExposeMeta})
	waitFor(t, "the identity server's tools", func() bool { return env.hasTool("id__whoami") })
	res := call(t, env.cs, ExecuteTool, map[string]any{"tool_name": "id__whoami"})
	if got := text(res); !res.IsError || !strings.Contains(got, "came without a bearer token") || strings.Contains(got, "you are") {
		t.Errorf("whoami without a token: %q (error %v), want a refusal that says the call has no caller token", got, res.IsError)
	}
}
