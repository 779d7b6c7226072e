package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeHTTPHostGuard: a `serve --http` on a loopback address without
// a token refuses, on every endpoint that reveals data, a request whose
// Host is not this machine (a DNS-rebinding page of evil.example resolved
// to 127.0.0.1 sends no Origin on a same-origin GET): /metrics answered
// it 200 with upstream names, the version and per-tool usage while /mcp
// answered 403 (issue 34, defect 1). The probes /healthz and /readyz
// answer whatever the Host: load balancers probe them by IP or under
// their own names, and they say only "ok", "ready" or a reason that names
// nothing, which the 403 of the other endpoints tells as much as.
func TestServeHTTPHostGuard(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--http", "127.0.0.1:0", "--embedder", "builtin", "--data-dir", filepath.Join(t.TempDir(), "data")}, io.Discard, pw)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve still runs 30 s after its context ended")
		}
	})
	urlRE := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/mcp`)
	sc := bufio.NewScanner(pr)
	base := ""
	for sc.Scan() {
		if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
			base = "http://" + m[1]
			break
		}
	}
	go io.Copy(io.Discard, pr) // the log goes on
	if base == "" {
		t.Fatal("serve --http printed no URL")
	}
	do := func(method, path, host string) (int, string) {
		t.Helper()
		body := io.Reader(nil)
		if method == http.MethodPost {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		}
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Ready first, so that /readyz's answer does not depend on timing.
	deadline := time.Now().Add(60 * time.Second)
	for code, _ := do(http.MethodGet, "/readyz", "127.0.0.1"); code != http.StatusOK; code, _ = do(http.MethodGet, "/readyz", "127.0.0.1") {
		if time.Now().After(deadline) {
			t.Fatal("/readyz not 200 within 60 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, tc := range []struct {
		method, path, host string
		want               int
	}{
		{http.MethodGet, "/metrics", "evil.example", http.StatusForbidden},
		{http.MethodGet, "/metrics", "evil.example:80", http.StatusForbidden},
		{http.MethodGet, "/metrics", "localhost.evil.example", http.StatusForbidden},
		{http.MethodPost, "/mcp", "evil.example", http.StatusForbidden},
		{http.MethodGet, "/mcp", "evil.example", http.StatusForbidden},
		{http.MethodGet, "/healthz", "evil.example", http.StatusOK},
		{http.MethodGet, "/readyz", "evil.example", http.StatusOK},
		{http.MethodGet, "/metrics", "127.0.0.1", http.StatusOK},
		{http.MethodGet, "/metrics", "localhost:1234", http.StatusOK},
		{http.MethodPost, "/mcp", "localhost", http.StatusOK},
	} {
		t.Run(tc.method+" "+tc.path+" Host "+tc.host, func(t *testing.T) {
			code, body := do(tc.method, tc.path, tc.host)
			if code != tc.want {
				t.Errorf("%s %s with Host %q = %d %.200q, want %d", tc.method, tc.path, tc.host, code, body, tc.want)
			}
			if tc.want == http.StatusForbidden && strings.Contains(body, "toolscout_") {
				t.Errorf("%s %s with Host %q revealed metrics: %.200q", tc.method, tc.path, tc.host, body)
			}
		})
	}
}
