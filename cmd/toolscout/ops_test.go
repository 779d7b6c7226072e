package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/logtest"
)

// httpServe is a `toolscout serve --http` process.
type httpServe struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:PORT
	addr string // 127.0.0.1:PORT
	done chan struct{}
	err  error // of cmd.Wait, once done is closed

	mu  sync.Mutex
	log bytes.Buffer // stderr after the URL line
}

// startServeHTTP starts bin with args (serve --http 127.0.0.1:0 ...) and
// returns once it printed its URL. The process is interrupted at the end
// of the test if it still runs.
func startServeHTTP(t *testing.T, bin string, env []string, args ...string) *httpServe {
	t.Helper()
	s, head := launchServeHTTP(t, bin, env, args...)
	if s == nil {
		t.Fatalf("serve --http printed no URL:\n%s", head)
	}
	return s
}

// launchServeHTTP starts bin with args and reads its stderr up to the
// line with its URL: it returns the server, or nil and what the process
// printed when it ended without that line (it has exited then).
func launchServeHTTP(t *testing.T, bin string, env []string, args ...string) (*httpServe, string) {
	t.Helper()
	s := &httpServe{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	s.cmd.Env = append(os.Environ(), env...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	urlRE := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/mcp`)
	sc := bufio.NewScanner(stderr)
	var head []string
	for sc.Scan() {
		head = append(head, sc.Text())
		if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
			s.addr, s.base = m[1], "http://"+m[1]
			break
		}
	}
	go func() {
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	if s.base == "" {
		<-s.done
		return nil, strings.Join(head, "\n")
	}
	return s, ""
}

// startServeHTTPAt starts serve --http (args gets the address) on a
// loopback port that pick chooses, for a test whose config must name
// the address before the server starts (toolscout.oauth's resource
// URL), so that serve cannot bind port 0. A port that was free when
// picked can be taken by another process before serve binds it: serve
// then exits with "address already in use", and the next port picked is
// tried (issue 47). pick is freeAddr but in the test of this retry.
func startServeHTTPAt(t *testing.T, bin string, env []string, pick func(*testing.T) string, args func(addr string) []string) *httpServe {
	t.Helper()
	const attempts = 5
	for i := 1; ; i++ {
		addr := pick(t)
		s, head := launchServeHTTP(t, bin, env, args(addr)...)
		if s != nil {
			if s.addr != addr {
				t.Fatalf("serve --http %s listens on %s", addr, s.addr)
			}
			return s
		}
		if !strings.Contains(head, "address already in use") || i == attempts {
			t.Fatalf("serve --http %s printed no URL (attempt %d of %d):\n%s", addr, i, attempts, head)
		}
		t.Logf("serve --http %s: the port was taken meanwhile; another port", addr)
	}
}

// TestServeHTTPAtRetriesATakenPort: when another process binds the
// port picked for serve before serve does (here the test itself holds
// it), startServeHTTPAt starts serve again on the next port picked
// instead of failing the test that needed the address beforehand.
func TestServeHTTPAtRetriesATakenPort(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var picked []string
	pick := func(t *testing.T) string {
		if len(picked) == 0 {
			picked = append(picked, taken.Addr().String())
		} else {
			picked = append(picked, freeAddr(t))
		}
		return picked[len(picked)-1]
	}
	s := startServeHTTPAt(t, bin, []string{"OLLAMA_HOST=127.0.0.1:9"}, pick, func(addr string) []string {
		return []string{"serve", "--http", addr, "--embedder", "builtin", "--data-dir", t.TempDir()}
	})
	if len(picked) != 2 || s.addr != picked[1] {
		t.Errorf("serve listens on %s after the ports %v were picked; want the second, the first being taken", s.addr, picked)
	}
	if code, _ := get(t, s.base+"/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz = %d, want 200", code)
	}
}

// stop interrupts the server, waits for it to exit and returns all it
// logged: what it writes while its sessions and upstream connections
// close is in it (a check that a secret is absent reads this, issue 47).
func (s *httpServe) stop(t *testing.T) string {
	t.Helper()
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve still runs 30 s after an interrupt:\n%s", s.dump())
	}
	return s.logText()
}

// logText returns what the server logged after its URL.
func (s *httpServe) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// dump makes a hung process print its goroutines (SIGQUIT), waits for
// it to exit and returns its log.
func (s *httpServe) dump() string {
	s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
	return s.logText()
}

// get GETs path with the headers (name, value, name, value...) and
// returns the status code and body.
func get(t *testing.T, url string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitReady polls /readyz until it answers 200 (30 s at most).
func (s *httpServe) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get(t, s.base+"/readyz")
		if code == http.StatusOK {
			return
		}
		if code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "not ready: ") {
			t.Fatalf("/readyz = %d %q, want 503 with a reason while not ready", code, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %q after 30 s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bearer adds an Authorization header to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectMCP connects a go-sdk client to the server's /mcp (at protocol
// 2025-11-25: a session with its event stream, what a drain must end).
func connectMCP(t *testing.T, s *httpServe, hc *http.Client, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ops-test", Version: "1"}, opts).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: s.base + "/mcp", HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// metricLine returns the line of the series (name with its labels, as
// the text format writes them) in a scrape, or "".
func metricLine(scrape, series string) string {
	for line := range strings.Lines(scrape) {
		if strings.HasPrefix(line, series+" ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// TestServeOperationsEndpoints: with a token configured, /healthz and
// /readyz answer without it (and whatever the Origin), /metrics needs
// it; the metrics count a discover_tools call made by a go-sdk client.
func TestServeOperationsEndpoints(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	const token = "ops-test-token"
	s := startServeHTTP(t, bin, []string{"TOOLSCOUT_AUTH_TOKEN=" + token},
		"serve", "--http", "127.0.0.1:0", "--embedder", "builtin", "--data-dir", t.TempDir(), "--log-format", "json")
	if code, body := get(t, s.base+"/healthz", "Origin", "https://evil.example"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz with a foreign Origin, no token = %d %q, want 200 ok", code, body)
	}
	s.waitReady(t)
	if code, body := get(t, s.base+"/readyz", "Origin", "https://evil.example"); code != http.StatusOK || body != "ready\n" {
		t.Errorf("/readyz = %d %q, want 200 ready", code, body)
	}
	if code, _ := get(t, s.base+"/metrics"); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token = %d, want 401", code)
	}
	cs := connectMCP(t, s, &http.Client{Transport: bearer{token}}, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{"query": "restart the web deployment", "limit": 3}})
	if err != nil || res.IsError {
		t.Fatalf("discover_tools: %v %+v", err, res)
	}
	code, scrape := get(t, s.base+"/metrics", "Authorization", "Bearer "+token)
	if code != http.StatusOK {
		t.Fatalf("/metrics with the token = %d", code)
	}
	for _, want := range []string{
		`toolscout_requests_total{method="tools/call",tool="discover_tools"} 1`,
		`toolscout_request_duration_seconds_count{method="tools/call",tool="discover_tools"} 1`,
		`toolscout_requests_total{method="tools/call",tool="get_tool_schema"} 0`,
		`toolscout_index_tools 302`,
		`toolscout_sessions_open 1`,
		`toolscout_ready 1`,
	} {
		series := want[:strings.LastIndex(want, " ")]
		if got := metricLine(scrape, series); got != want {
			t.Errorf("metrics: %q, want %q", got, want)
		}
	}
	if !strings.Contains(scrape, "# TYPE toolscout_request_duration_seconds histogram") {
		t.Error("toolscout_request_duration_seconds is not a histogram")
	}
	// Logged once the load has settled, so possibly after /readyz said
	// ready: wait for the line.
	waitLog(t, s, `"msg":"index loaded"`)
	if log := s.logText(); !regexp.MustCompile(`"msg":"index loaded".*"in":"[0-9.]+[mµn]?s"`).MatchString(log) {
		t.Errorf("--log-format json: no JSON \"index loaded\" line with its duration as text in:\n%s", log)
	}
}

// everythingConfig writes a config with the reference server
// server-everything (its trigger-long-running-operation tool takes as
// long as it is told), over stdio or, with sse, as a remote server
// speaking the old SSE transport, started here.
func everythingConfig(t *testing.T, sse bool) string {
	t.Helper()
	nodeClient(t)
	root, _ := filepath.Abs("../..")
	everything := filepath.Join(root, "node_modules", ".bin", "mcp-server-everything")
	entry := `{"command": "` + everything + `"}`
	if sse {
		addr := startListening(t, exec.Command(everything, "sse"), "server-everything sse")
		entry = `{"type": "sse", "url": "http://` + addr + `/sse"}`
	}
	cfg := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"everything": `+entry+`}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// longCall starts execute_tool of the upstream's long-running operation
// (seconds long) and returns once the upstream reported its first step
// of progress, with the channel its outcome will come on.
func longCall(t *testing.T, s *httpServe, seconds int) <-chan error {
	t.Helper()
	progress := make(chan struct{}, 100)
	cs := connectMCP(t, s, nil, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		progress <- struct{}{}
	}})
	outcome := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "execute_tool", Arguments: map[string]any{
			"tool_name": "everything__trigger-long-running-operation",
			"arguments": map[string]any{"duration": seconds, "steps": seconds},
		}}
		params.SetProgressToken("drain-test")
		res, err := cs.CallTool(context.Background(), params)
		switch {
		case err != nil:
			outcome <- err
		case res.IsError || len(res.Content) == 0:
			js, _ := json.Marshal(res.Content)
			outcome <- fmt.Errorf("tool error: %s", js)
		default:
			if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "Long running operation completed") {
				outcome <- fmt.Errorf("unexpected result %+v", res.Content[0])
				return
			}
			outcome <- nil
		}
	}()
	select {
	case <-progress:
	case err := <-outcome:
		t.Fatalf("the long call ended before its first progress: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no progress from the long call within 30 s")
	}
	return outcome
}

// refused waits until a new TCP connection to addr is refused (10 s at
// most) and returns nil, or else what happened. A connect that was in
// the listener's queue when it closed is reset: refused too.
func refused(addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
			return nil
		}
		if err != nil {
			return err
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	return errors.New("connections still accepted after 10 s")
}

// listeningRE is the line testdata/listening.cjs prints for a port bound.
var listeningRE = regexp.MustCompile(`^toolscout-test: listening on port (\d+)$`)

// startListening starts cmd, a node server that listens where its PORT
// says, on port 0 with testdata/listening.cjs preloaded, and returns the
// loopback address it bound, read from its stderr: no port is picked
// before the server binds it, so no other process can take it between
// (issue 47). The server is killed when the test ends.
func startListening(t *testing.T, cmd *exec.Cmd, what string) string {
	t.Helper()
	preload, err := filepath.Abs(filepath.Join("testdata", "listening.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "PORT=0", `NODE_OPTIONS=--require "`+preload+`"`)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ports := make(chan string, 1)
	var out logtest.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			out.Write([]byte(sc.Text() + "\n"))
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case ports <- m[1]:
				default:
				}
			}
		}
		close(ports)
	}()
	select {
	case p, ok := <-ports:
		if !ok {
			t.Fatalf("%s ended without listening:\n%s", what, out.String())
		}
		return "127.0.0.1:" + p
	case <-time.After(30 * time.Second):
		t.Fatalf("%s does not listen after 30 s:\n%s", what, out.String())
	}
	return ""
}

// TestServeDrainsOnSIGTERM: a SIGTERM while an upstream tool call is in
// flight stops new connections at once, lets the call finish (its
// upstream session still up, over stdio or SSE), then exits 0; with a
// drain timeout shorter than the call, the process exits at the bound
// and the call is cut.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	serve := func(t *testing.T, cfg, drain string) *httpServe {
		s := startServeHTTP(t, bin, nil, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--embedder", "builtin",
			"--data-dir", t.TempDir(), "--drain-timeout", drain)
		s.waitReady(t)
		return s
	}
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("call finishes, sse upstream %v", sse), func(t *testing.T) {
			s := serve(t, everythingConfig(t, sse), "30s")
			outcome := longCall(t, s, 3)
			s.cmd.Process.Signal(syscall.SIGTERM)
			if err := refused(s.addr); err != nil {
				t.Errorf("new connections after SIGTERM: %v", err)
			}
			select {
			case err := <-outcome:
				if err != nil {
					t.Errorf("the call in flight failed: %v\n%s", err, s.logText())
				}
			case <-s.done:
				t.Fatalf("the process exited before the call in flight was answered:\n%s", s.logText())
			}
			select {
			case <-s.done:
			case <-time.After(30 * time.Second):
				t.Fatalf("the process still runs 30 s after its last call, its drain timeout:\n%s", s.dump())
			}
			if s.err != nil || !strings.Contains(s.logText(), "drained") {
				t.Errorf("exit: %v; log:\n%s", s.err, s.logText())
			}
		})
	}
	t.Run("bound", func(t *testing.T) {
		s := serve(t, everythingConfig(t, false), "1s")
		outcome := longCall(t, s, 60)
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("the process still runs 20 s after SIGTERM with --drain-timeout 1s:\n%s", s.dump())
		}
		if s.err != nil || !strings.Contains(s.logText(), "drain cut requests short") {
			t.Errorf("exit: %v; log:\n%s", s.err, s.logText())
		}
		select {
		case err := <-outcome:
			if err == nil {
				t.Error("a 60 s call succeeded although the server drained for 1 s")
			}
		case <-time.After(30 * time.Second):
			t.Error("the cut call never returned to the client")
		}
	})
}

// TestServeDrainDelay: with --drain-delay, a SIGTERM turns /readyz to 503
// at once while the server keeps accepting new connections and answering
// on them for the delay, so that a load balancer takes it out before a
// request can meet a closing connection; then it drains and exits 0. A
// second signal ends the delay.
func TestServeDrainDelay(t *testing.T) {
	bin := buildBinary(t)
	serve := func(t *testing.T, delay string) *httpServe {
		s := startServeHTTP(t, bin, nil, "serve", "--http", "127.0.0.1:0", "--embedder", "builtin",
			"--data-dir", t.TempDir(), "--drain-delay", delay)
		s.waitReady(t)
		return s
	}
	notReady := func(t *testing.T, s *httpServe) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			code, body := get(t, s.base+"/readyz")
			if code == http.StatusServiceUnavailable && strings.Contains(body, "draining") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz = %d %q 10 s after SIGTERM, want 503 draining", code, body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Run("serves during the delay", func(t *testing.T) {
		s := serve(t, "4s")
		sent := time.Now()
		s.cmd.Process.Signal(syscall.SIGTERM)
		notReady(t, s)
		// A new connection, as a load balancer opens before it has seen
		// the 503, is still answered.
		hc := &http.Client{Transport: &http.Transport{}}
		cs := connectMCP(t, s, hc, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{"query": "open a ticket"}})
		if err != nil || res.IsError {
			t.Fatalf("discover_tools during the drain delay: %v %+v\n%s", err, res, s.logText())
		}
		if time.Since(sent) >= 4*time.Second {
			t.Fatalf("the call ended %s after SIGTERM, past the delay: the test proves nothing", time.Since(sent))
		}
		select {
		case <-s.done:
			t.Fatalf("exited %s after SIGTERM, before its 4 s delay:\n%s", time.Since(sent), s.logText())
		case <-time.After(4*time.Second - time.Since(sent) - 200*time.Millisecond):
		}
		cs.Close()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("still running 30 s after the delay:\n%s", s.dump())
		}
		if log := s.logText(); s.err != nil || !strings.Contains(log, "until load balancers see it") || !strings.Contains(log, "drained") {
			t.Errorf("exit: %v; log:\n%s", s.err, log)
		}
	})
	t.Run("a second signal ends it", func(t *testing.T) {
		s := serve(t, "10m")
		s.cmd.Process.Signal(syscall.SIGTERM)
		notReady(t, s)
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("still running 30 s after a second signal during a 10 m delay:\n%s", s.dump())
		}
		if log := s.logText(); s.err != nil || !strings.Contains(log, "second signal") {
			t.Errorf("exit: %v; log:\n%s", s.err, log)
		}
	})
}

// TestServeSIGTERMLogsShutdown (issue 52, item 10): a plain SIGTERM,
// with one upstream server connected and one still connecting, says
// toolscout is shutting down and warns of nothing: the connection
// attempt it cuts is no "upstream unavailable ... context canceled".
func TestServeSIGTERMLogsShutdown(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	end := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers
		case <-r.Context().Done():
		case <-end:
		}
	}))
	t.Cleanup(stuck.Close)
	t.Cleanup(func() { close(end) }) // first
	cfg := everythingConfig(t, false)
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	servers := strings.Replace(string(data), `{"mcpServers": {`, `{"mcpServers": {"stuck": {"url": "`+stuck.URL+`/mcp"}, `, 1)
	if err := os.WriteFile(cfg, []byte(servers), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServeHTTP(t, bin, nil, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--embedder", "builtin", "--data-dir", t.TempDir())
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(s.logText(), `msg="upstream connected" domain=everything`) {
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not connect in 30 s:\n%s", s.logText())
		}
		time.Sleep(50 * time.Millisecond)
	}
	before := len(s.logText())
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the process still runs 30 s after SIGTERM:\n%s", s.dump())
	}
	after := s.logText()[before:]
	if s.err != nil || !strings.Contains(after, "toolscout is shutting down") {
		t.Errorf("exit %v; log after SIGTERM does not say toolscout is shutting down:\n%s", s.err, after)
	}
	for _, line := range strings.Split(after, "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			t.Errorf("a plain SIGTERM logged %s", line)
		}
	}
}
