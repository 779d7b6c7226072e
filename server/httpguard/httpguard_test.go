package httpguard

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	tests := []struct {
		name    string
		opts    Options
		local   string // the address the request reached ("": unknown)
		host    string // its Host header ("": httptest's example.com)
		origin  string
		auth    string
		want    int
		wantErr string
	}{
		{"no origin", Options{}, "", "", "", "", 200, ""},
		{"foreign origin", Options{}, "", "", "http://evil.example", "", 403, "--allow-origin"},
		{"null origin", Options{}, "", "", "null", "", 403, "loopback"},
		{"localhost origin", Options{}, "", "", "http://localhost:6274", "", 200, ""},
		{"127.0.0.1 origin", Options{}, "", "", "http://127.0.0.1:8080", "", 200, ""},
		{"ipv6 loopback origin", Options{}, "", "", "http://[::1]:3000", "", 200, ""},
		{"lookalike origin", Options{}, "", "", "http://localhost.evil.example", "", 403, ""},
		{"allowed origin", Options{AllowedOrigins: []string{"https://app.example"}}, "", "", "https://app.example", "", 200, ""},
		{"any origin", Options{AllowedOrigins: []string{"*"}}, "", "", "http://evil.example", "", 200, ""},
		{"token missing", Options{Token: "s3cret"}, "", "", "", "", 401, "Authorization: Bearer"},
		{"token wrong", Options{Token: "s3cret"}, "", "", "", "Bearer nope", 401, ""},
		{"token basic", Options{Token: "s3cret"}, "", "", "", "Basic czNjcmV0", 401, ""},
		{"token right", Options{Token: "s3cret"}, "", "", "", "Bearer s3cret", 200, ""},
		{"token right, lower-case scheme", Options{Token: "s3cret"}, "", "", "", "bearer s3cret", 200, ""},
		{"token right, upper-case scheme, two spaces", Options{Token: "s3cret"}, "", "", "", "BEARER  s3cret", 200, ""},
		{"token in another scheme", Options{Token: "s3cret"}, "", "", "", "Basic s3cret", 401, ""},
		{"scheme without token", Options{Token: "s3cret"}, "", "", "", "Bearer ", 401, ""},
		{"token right, foreign origin", Options{Token: "s3cret"}, "", "", "http://evil.example", "Bearer s3cret", 403, ""},
		// DNS rebinding: a page of evil.example, resolved to 127.0.0.1,
		// sends its own name as Host and, for a same-origin GET, no
		// Origin at all.
		{"loopback, foreign host", Options{}, "127.0.0.1:8080", "evil.example:8080", "", "", 403, "DNS rebinding"},
		{"loopback, foreign host without port", Options{}, "127.0.0.1:8080", "evil.example", "", "", 403, "DNS rebinding"},
		{"loopback, lookalike host", Options{}, "127.0.0.1:8080", "localhost.evil.example:8080", "", "", 403, ""},
		{"loopback, foreign host, token right", Options{Token: "s3cret"}, "127.0.0.1:8080", "evil.example:8080", "", "Bearer s3cret", 403, ""},
		{"loopback, foreign host, any origin allowed", Options{AllowedOrigins: []string{"*"}}, "127.0.0.1:8080", "evil.example", "", "", 403, ""},
		{"ipv6 loopback, foreign host", Options{}, "[::1]:8080", "evil.example", "", "", 403, ""},
		{"loopback, no host", Options{}, "127.0.0.1:8080", "-", "", "", 403, ""},
		{"loopback, localhost", Options{}, "127.0.0.1:8080", "localhost:8080", "", "", 200, ""},
		{"loopback, 127.0.0.1", Options{}, "127.0.0.1:8080", "127.0.0.1:8080", "", "", 200, ""},
		{"loopback, 127.0.0.2 without port", Options{}, "127.0.0.1:8080", "127.0.0.2", "", "", 200, ""},
		{"ipv6 loopback, [::1]", Options{}, "[::1]:8080", "[::1]:8080", "", "", 200, ""},
		// Over the network the Host is the network's name for the
		// server; the token guards it.
		{"network address, its name", Options{Token: "s3cret"}, "10.0.0.5:8080", "toolscout.internal:8080", "", "Bearer s3cret", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tc.local != "" {
				addr, err := net.ResolveTCPAddr("tcp", tc.local)
				if err != nil {
					t.Fatal(err)
				}
				req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, addr))
			}
			switch tc.host {
			case "":
			case "-":
				req.Host = ""
			default:
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			Wrap(ok, tc.opts).ServeHTTP(rec, req)
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.wantErr) {
				t.Errorf("status %d %q, want %d containing %q", rec.Code, rec.Body.String(), tc.want, tc.wantErr)
			}
			if tc.want == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer ") {
				t.Errorf("401 without a Bearer WWW-Authenticate challenge: %q", rec.Header().Get("WWW-Authenticate"))
			}
		})
	}
}
