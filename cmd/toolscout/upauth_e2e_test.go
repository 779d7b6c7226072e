package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/logtest"
	"github.com/toolscout/toolscout/server/upauth"
)

// tsOAuthServer runs the TypeScript SDK's example Streamable HTTP server
// with its OAuth demo provider (an authorization server on its own port
// with dynamic client registration, PKCE and token introspection; the
// MCP server behind its bearer middleware) and returns the MCP URL. Its
// tokens live in the process: stop and start again revokes them all.
type tsOAuthServer struct {
	cmd             *exec.Cmd
	mcpPort, asPort string
	out             *logtest.Buffer
	done            chan struct{} // closed once the process has exited
}

// startTSOAuth starts the example on two loopback ports picked here: its
// authorization server's URLs name them, so it cannot bind port 0. A
// port that was free when picked can be taken by another process before
// the example binds it; it then exits with EADDRINUSE, and two other
// ports are tried (issue 47). It returns once both servers said they
// listen: a connection that succeeds proves nothing, as the port may be
// another process's.
func startTSOAuth(t *testing.T) *tsOAuthServer {
	t.Helper()
	root, _ := filepath.Abs("../..")
	script := filepath.Join(root, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js")
	if _, err := os.Stat(script); err != nil {
		needNode(t, "the TypeScript SDK's examples are missing: run `npm ci`")
	}
	const attempts = 5
	for i := 1; ; i++ {
		s := &tsOAuthServer{out: &logtest.Buffer{}, done: make(chan struct{})}
		s.mcpPort, s.asPort = twoPorts(t)
		s.cmd = exec.Command("node", script, "--oauth")
		s.cmd.Env = append(os.Environ(), "MCP_PORT="+s.mcpPort, "MCP_AUTH_PORT="+s.asPort)
		s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { s.cmd.Wait(); close(s.done) }()
		t.Cleanup(s.stop)
		listening := func() bool {
			out := s.out.String()
			return strings.Contains(out, "MCP Streamable HTTP Server listening on port "+s.mcpPort+"\n") &&
				strings.Contains(out, "OAuth Authorization Server listening on port "+s.asPort+"\n")
		}
		exited := false
		for deadline := time.Now().Add(30 * time.Second); !listening() && !exited; time.Sleep(20 * time.Millisecond) {
			select {
			case <-s.done:
				exited = !listening()
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("the TypeScript OAuth example does not say it listens on %s and %s after 30 s:\n%s", s.mcpPort, s.asPort, s.out.String())
			}
		}
		if !exited {
			return s
		}
		if !strings.Contains(s.out.String(), "EADDRINUSE") || i == attempts {
			t.Fatalf("the TypeScript OAuth example exited (attempt %d of %d):\n%s", i, attempts, s.out.String())
		}
		t.Logf("the TypeScript OAuth example: port %s or %s was taken meanwhile; two other ports", s.mcpPort, s.asPort)
	}
}

func (s *tsOAuthServer) stop() {
	s.cmd.Process.Kill()
	<-s.done
}

// twoPorts returns two loopback ports nothing listened on when they
// were picked, not the same one twice (both are held until then).
func twoPorts(t *testing.T) (string, string) {
	t.Helper()
	var ps [2]string
	for i := range ps {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		_, ps[i], _ = net.SplitHostPort(ln.Addr().String())
	}
	return ps[0], ps[1]
}

// authLogin runs `toolscout auth login SERVER --no-browser` and plays
// the browser: it reads the authorization URL the command prints, GETs
// it (the demo provider grants at once and redirects) and follows the
// redirect to the command's loopback listener. It returns the output.
func authLogin(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"auth", "login"}, args...)...)
	cmd.Env = append(os.Environ(), "OLLAMA_HOST=127.0.0.1:9")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	var mu sync.Mutex
	urls := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			out.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if u := strings.TrimSpace(sc.Text()); strings.HasPrefix(u, "http://") && strings.Contains(u, "/authorize?") {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		noRedirect := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noRedirect.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode/100 != 3 || !strings.HasPrefix(loc, "http://127.0.0.1:") {
			t.Fatalf("GET the authorization URL = %s, Location %q; want a redirect to the loopback listener", resp.Status, loc)
		}
		resp, err = noRedirect.Get(loc)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
	}
	<-done
	err = cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		t.Fatalf("auth login: %v\n%s%s", err, out.String(), stderr.String())
	}
	return out.String() + stderr.String()
}

func runBin(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "OLLAMA_HOST=127.0.0.1:9")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("toolscout %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestAuthLoginTypeScriptOAuth: an OAuth-protected MCP server (the
// TypeScript SDK's example with its demo provider) behind toolscout:
// `auth login` discovers its authorization server from the 401,
// registers, signs in headlessly (the test follows the URL), saves the
// token 0600; serve lists and runs its tools; when the server forgets
// the token (restarted: revoked) and no refresh token was given, the
// server is unavailable with the sign-in message; status and logout say
// what they should, and no token appears in any output.
func TestAuthLoginTypeScriptOAuth(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		needNode(t, "node is not installed")
	}
	bin := buildBinary(t)
	mcpPort := startTSOAuth(t).mcpPort
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"url": "http://localhost:" + mcpPort + "/mcp", "auth": map[string]any{"type": "oauth"}}}}
	js, _ := json.Marshal(cfg)
	cfgFile := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(cfgFile, js, 0o600); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder // every output, to look for tokens in
	global := []string{"--config", cfgFile, "--data-dir", data}

	out := runBin(t, bin, append([]string{"auth", "status"}, global...)...)
	seen.WriteString(out)
	if !strings.Contains(out, "demo: not signed in") {
		t.Errorf("auth status before login = %q, want not signed in", out)
	}
	out = authLogin(t, bin, append([]string{"demo", "--no-browser"}, global...)...)
	seen.WriteString(out)
	if !strings.Contains(out, "signed in to demo, valid until") {
		t.Errorf("auth login = %q, want signed in to demo", out)
	}
	credFile := filepath.Join(data, upauth.FileName)
	fi, err := os.Stat(credFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v, %v; want mode 0600", fi, err)
	}
	e, err := upauth.OpenStore(credFile).Get("demo")
	if err != nil || e == nil || e.AccessToken == "" || e.ClientID == "" {
		t.Fatalf("stored sign-in = %+v, %v", e, err)
	}
	secrets := []string{e.AccessToken} // the client id is public: the authorization URL carries it
	if e.ClientSecret != "" {
		secrets = append(secrets, e.ClientSecret)
	}
	out = runBin(t, bin, append([]string{"auth", "status"}, global...)...)
	seen.WriteString(out)
	if !regexp.MustCompile(`demo: signed in, valid until \S+, scopes mcp:tools, no refresh token`).MatchString(out) {
		t.Errorf("auth status after login = %q", out)
	}

	// Through toolscout: the server's tools listed and run.
	s := startServeHTTP(t, bin, []string{"OLLAMA_HOST=127.0.0.1:9"}, append([]string{"serve", "--http", "127.0.0.1:0", "--embedder", "builtin"}, global...)...)
	s.waitReady(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "upauth-test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: s.base + "/mcp", HTTPClient: http.DefaultClient, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) (*mcp.CallToolResult, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text := toolText(res)
		seen.WriteString(text)
		return res, text
	}
	if _, text := call("discover_tools", map[string]any{"domain": "demo"}); !strings.Contains(text, `"demo__greet"`) {
		t.Fatalf("discover_tools demo = %s, want its greet tool\n%s", text, s.logText())
	}
	if res, text := call("execute_tool", map[string]any{"tool_name": "demo__greet", "arguments": map[string]any{"name": "Ada"}}); res.IsError || !strings.Contains(text, "Hello, Ada") {
		t.Errorf("execute_tool demo__greet = %s (isError %v), want its greeting", text, res.IsError)
	}

	// The token expires (its hour passed: the file says so) and the demo
	// provider gave no refresh token: the server is unavailable until a
	// new sign-in, said so. (A token the demo no longer knows gets HTTP
	// 500 from it, not 401: its verifier throws a plain Error, which its
	// bearer middleware maps to server_error; the 401 path is
	// TestUpstreamOAuth's, against the go-sdk's middleware.)
	e.Expiry = time.Now().Add(-time.Minute)
	if err := upauth.OpenStore(credFile).Put("demo", e); err != nil {
		t.Fatal(err)
	}
	res, text := call("execute_tool", map[string]any{"tool_name": "demo__greet", "arguments": map[string]any{"name": "Ada"}})
	if !res.IsError || !strings.Contains(text, "unavailable: sign in again with toolscout auth login demo") {
		t.Errorf("execute_tool after the token was revoked = %s (isError %v), want the sign-in message", text, res.IsError)
	}
	out = runBin(t, bin, append([]string{"auth", "logout", "demo"}, global...)...)
	seen.WriteString(out)
	if !strings.Contains(out, "demo: signed out") {
		t.Errorf("auth logout = %q", out)
	}
	out = runBin(t, bin, append([]string{"auth", "status"}, global...)...)
	seen.WriteString(out)
	if !strings.Contains(out, "demo: not signed in") {
		t.Errorf("auth status after logout = %q", out)
	}
	cs.Close()
	// The whole log, once serve has ended: what it writes as its
	// upstream session closes is in it.
	seen.WriteString(s.stop(t))
	for _, sec := range secrets {
		if strings.Contains(seen.String(), sec) {
			t.Errorf("a secret of the sign-in (%d bytes) appears in the output, answers or log", len(sec))
		}
	}
}
