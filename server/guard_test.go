package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	tests := []struct {
		name    string
		opts    GuardOptions
		origin  string
		auth    string
		want    int
		wantErr string
	}{
		{"no origin", GuardOptions{}, "", "", 200, ""},
		{"foreign origin", GuardOptions{}, "http://evil.example", "", 403, "--allow-origin"},
		{"null origin", GuardOptions{}, "null", "", 403, "loopback"},
		{"localhost origin", GuardOptions{}, "http://localhost:6274", "", 200, ""},
		{"127.0.0.1 origin", GuardOptions{}, "http://127.0.0.1:8080", "", 200, ""},
		{"ipv6 loopback origin", GuardOptions{}, "http://[::1]:3000", "", 200, ""},
		{"lookalike origin", GuardOptions{}, "http://localhost.evil.example", "", 403, ""},
		{"allowed origin", GuardOptions{AllowedOrigins: []string{"https://app.example"}}, "https://app.example", "", 200, ""},
		{"any origin", GuardOptions{AllowedOrigins: []string{"*"}}, "http://evil.example", "", 200, ""},
		{"token missing", GuardOptions{Token: "s3cret"}, "", "", 401, "Authorization: Bearer"},
		{"token wrong", GuardOptions{Token: "s3cret"}, "", "Bearer nope", 401, ""},
		{"token basic", GuardOptions{Token: "s3cret"}, "", "Basic czNjcmV0", 401, ""},
		{"token right", GuardOptions{Token: "s3cret"}, "", "Bearer s3cret", 200, ""},
		{"token right, lower-case scheme", GuardOptions{Token: "s3cret"}, "", "bearer s3cret", 200, ""},
		{"token right, upper-case scheme, two spaces", GuardOptions{Token: "s3cret"}, "", "BEARER  s3cret", 200, ""},
		{"token in another scheme", GuardOptions{Token: "s3cret"}, "", "Basic s3cret", 401, ""},
		{"scheme without token", GuardOptions{Token: "s3cret"}, "", "Bearer ", 401, ""},
		{"token right, foreign origin", GuardOptions{Token: "s3cret"}, "http://evil.example", "Bearer s3cret", 403, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			Guard(ok, tc.opts).ServeHTTP(rec, req)
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.wantErr) {
				t.Errorf("status %d %q, want %d containing %q", rec.Code, rec.Body.String(), tc.want, tc.wantErr)
			}
			if tc.want == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer ") {
				t.Errorf("401 without a Bearer WWW-Authenticate challenge: %q", rec.Header().Get("WWW-Authenticate"))
			}
		})
	}
}

func TestMaxSessions(t *testing.T) {
	srv := New(Options{Live: testLive(t, testCatalog, nil)})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{MaxSessions: 2}))
	t.Cleanup(hs.Close)
	connect := func() (*mcp.ClientSession, error) {
		return mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, sessionOpts)
	}
	// Sessions end asynchronously after the client's DELETE, so a new one
	// may need a moment: retry, and close every session before hs.Close
	// (which waits for their streams).
	connectSoon := func() (*mcp.ClientSession, error) {
		deadline := time.Now().Add(5 * time.Second)
		cs, err := connect()
		for err != nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			cs, err = connect()
		}
		if err == nil {
			t.Cleanup(func() { cs.Close() })
		}
		return cs, err
	}
	a, err := connectSoon()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectSoon(); err != nil {
		t.Fatal(err)
	}
	if _, err := connect(); err == nil || !strings.Contains(err.Error(), "503") && !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("third session: %v, want 503", err)
	}
	// Open sessions keep working; closing one makes room.
	if res := call(t, a, DiscoverTools, map[string]any{}); res.IsError {
		t.Errorf("call on an open session: %s", text(res))
	}
	a.Close()
	if _, err := connectSoon(); err != nil {
		t.Errorf("a session after one closed: %v", err)
	}
}
