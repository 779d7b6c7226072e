package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/echoupstream"
	"github.com/toolscout/toolscout/internal/logtest"
	"github.com/toolscout/toolscout/server"
)

// TestNoSecretInAnythingARunWrites (issue 52, item 1): with upstream
// servers that echo the credentials they are sent in every place they
// can (WWW-Authenticate on 401 and 403 at connect and at a call, a
// JSON-RPC error, a 400 and a 500 body, tool results, descriptions,
// schemas, instructions), no configured secret (header_files, the
// forwarded toolscout token) is found in anything a run writes: the
// answers of discover_tools (browse, domain, search), get_tool_schema
// and execute_tool, the log at debug level, /metrics, the audit trail
// (arguments on), the data dir, doctor's output. What a person needs of
// a refusal is still said: the status, the scheme, realm and error code.
func TestNoSecretInAnythingARunWrites(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:9")
	const (
		upstreamSecret = "Bearer s3cret-upstream-token-0123456789"
		serveToken     = "toolscout-token-abcdef0123456789"
	)
	secrets := []string{upstreamSecret, strings.TrimPrefix(upstreamSecret, "Bearer "), serveToken}
	echo := httptest.NewServer(echoupstream.Handler(""))
	t.Cleanup(echo.Close)
	refuse401 := httptest.NewServer(echoupstream.Handler(echoupstream.Refuse401))
	t.Cleanup(refuse401.Close)
	refuse403 := httptest.NewServer(echoupstream.Handler(echoupstream.Refuse403))
	t.Cleanup(refuse403.Close)

	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("upstream.auth", upstreamSecret+"\n")
	tokenFile := write("serve.token", serveToken+"\n")
	entry := func(url string, forward bool) map[string]any {
		return map[string]any{"url": url, "type": "http", "header_files": map[string]string{"Authorization": "upstream.auth"}, "forward_authorization": forward, "connect_timeout": 10}
	}
	cfg, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{
			"echo": entry(echo.URL, false), "fwd": entry(echo.URL, true),
			"refused": entry(refuse401.URL, false), "forbidden": entry(refuse403.URL, false),
		},
		"toolscout": map[string]any{"audit": "audit.log", "audit_arguments": true},
	})
	cfgFile := write("servers.json", string(cfg))
	data := filepath.Join(dir, "data")

	var answers []string
	serveLog := &logtest.Buffer{}
	call := func(cs *mcp.ClientSession, name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		b, _ := json.Marshal(res)
		answers = append(answers, string(b))
		return string(b)
	}
	// A config of the refusing servers alone: a search of a catalog
	// without tools says which servers are unavailable, and why.
	alone, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"refused": entry(refuse401.URL, false), "forbidden": entry(refuse403.URL, false)}})
	cs, base, stop := serveInProcess(t, serveLog, "--config", write("alone.json", string(alone)), "--auth-token-file", tokenFile, "--data-dir", filepath.Join(dir, "alone-data"))
	var search string
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(search, "HTTP 403") || !strings.Contains(search, "HTTP 401"); time.Sleep(100 * time.Millisecond) {
		search = call(cs, server.DiscoverTools, map[string]any{"query": "who echoes what it was sent"})
		if time.Now().After(deadline) {
			t.Fatalf("the refusing servers are not said unavailable within 60 s: %s", search)
		}
	}
	stop()

	cs, base, stop = serveInProcess(t, serveLog, "--config", cfgFile, "--auth-token-file", tokenFile, "--data-dir", data)
	hc := &http.Client{Transport: bearer{serveToken}}
	// Every server has had its first try once the echo server's tools
	// are listed and the two refusing ones are said unavailable.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		a := call(cs, server.DiscoverTools, map[string]any{})
		if strings.Contains(a, "fwd") && strings.Contains(a, "refused") && strings.Contains(a, "forbidden") && !strings.Contains(a, "connecting") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upstream servers did not settle within 60 s: %s", a)
		}
	}
	browse := call(cs, server.DiscoverTools, map[string]any{})
	refusedDomain := call(cs, server.DiscoverTools, map[string]any{"domain": "refused"})
	call(cs, server.DiscoverTools, map[string]any{"domain": "echo"})
	call(cs, server.DiscoverTools, map[string]any{"query": "who echoes what it was sent"})
	call(cs, server.GetToolSchema, map[string]any{"tool_name": "echo__whoami"})
	for _, tool := range []string{"echo__whoami", "echo__rpc", "echo__boom", "echo__bad", "echo__refuse401", "echo__refuse403", "fwd__whoami", "fwd__rpc", "refused__whoami", "forbidden__whoami"} {
		args := map[string]any{}
		if strings.HasSuffix(tool, "whoami") {
			args["x"] = "a caller passing " + upstreamSecret // recorded by the audit trail
		}
		call(cs, server.ExecuteTool, map[string]any{"tool_name": tool, "arguments": args})
	}
	// What a person needs of a refusal is said (quotes are escaped once
	// or more in an answer's JSON: compared without them).
	unquoted := func(s string) string { return strings.NewReplacer(`\`, "", `"`, "").Replace(s) }
	refused401 := "HTTP 401 Unauthorized; it asks for: Bearer realm=up, error=invalid_token"
	refused403 := "HTTP 403 Forbidden; it asks for: Bearer realm=up, error=insufficient_scope"
	for _, tc := range []struct{ what, answer, want string }{
		{"browse", browse, refused401},
		{"browse", browse, refused403},
		{"domain", refusedDomain, refused401},
		{"search", search, "upstream servers unavailable: forbidden (server forbidden refused toolscout's credentials (" + refused403},
		{"search", search, refused401},
		{"execute_tool echo__refuse403", answers[len(answers)-5], refused403},
		{"execute_tool fwd__whoami", answers[len(answers)-4], "you sent Bearer [redacted]"},
	} {
		if !strings.Contains(unquoted(tc.answer), tc.want) {
			t.Errorf("%s does not say %s:\n%s", tc.what, tc.want, tc.answer)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cs.Close()
	stop()

	var doctorOut, doctorErr bytes.Buffer
	run(context.Background(), []string{"doctor", "--config", cfgFile, "--embedder", "builtin", "--data-dir", filepath.Join(dir, "doctor-data"), "--log-level", "debug"}, &doctorOut, &doctorErr)
	if !strings.Contains(doctorOut.String(), `HTTP 403 Forbidden; it asks for: Bearer realm="up", error="insufficient_scope"`) {
		t.Errorf("doctor does not name the refusal:\n%s", doctorOut.String())
	}

	written := map[string]string{
		"answers":       strings.Join(answers, "\n"),
		"serve log":     serveLog.String(),
		"/metrics":      string(metrics),
		"doctor stdout": doctorOut.String(),
		"doctor stderr": doctorErr.String(),
		"audit.log":     readFile(t, filepath.Join(dir, "audit.log")),
	}
	if !strings.Contains(written["audit.log"], "[redacted]") {
		t.Errorf("the audit trail's arguments are not redacted:\n%s", written["audit.log"])
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Dir(p) != dir {
			written[p] = readFile(t, p) // the data dirs
		}
		return nil
	})
	for what, text := range written {
		for _, s := range secrets {
			if i := strings.Index(text, s); i >= 0 {
				t.Errorf("%s holds the secret %q: …%s…", what, s, text[max(i-200, 0):min(i+len(s)+100, len(text))])
			}
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Errorf("%v", err)
	}
	return string(b)
}

// serveInProcess runs serve --http in this process, at debug level,
// with the builtin embedder and args, its log going to log, and returns
// a client of it (with serveToken's bearer: the caller of args'
// --auth-token-file), its base URL and what stops it (also called at
// the end of the test).
func serveInProcess(t *testing.T, log *logtest.Buffer, args ...string) (*mcp.ClientSession, string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	from := len(log.String())
	go func() {
		done <- run(ctx, append([]string{"serve", "--http", "127.0.0.1:0", "--embedder", "builtin", "--log-level", "debug"}, args...), io.Discard, log)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("serve still runs 30 s after its context ended")
			}
		})
	}
	t.Cleanup(stop)
	urlRE := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/mcp`)
	base := ""
	for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := urlRE.FindStringSubmatch(log.String()[from:]); m != nil {
			base = "http://" + m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("serve printed no URL:\n%s", log.String())
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "redact-test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{serveTokenOf(t, args)}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, base, stop
}

// serveTokenOf reads the token of args' --auth-token-file.
func serveTokenOf(t *testing.T, args []string) string {
	for i, a := range args {
		if a == "--auth-token-file" && i+1 < len(args) {
			return strings.TrimSpace(readFile(t, args[i+1]))
		}
	}
	return ""
}
