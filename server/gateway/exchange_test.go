package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestExchangeCacheBounded: the exchanged tokens of an upstream are
// bounded; the least recently used goes first, and one used since
// stays.
func TestExchangeCacheBounded(t *testing.T) {
	xc := &exchangeCache{max: 3}
	key := func(i int) [32]byte { return sha256.Sum256(fmt.Appendf(nil, "caller-%d", i)) }
	base := time.Now()
	for i := range 3 {
		xc.put(key(i), &exchangedToken{token: fmt.Sprint("tok-", i), expiry: base.Add(time.Hour)})
		xc.tokens[key(i)].used = base.Add(time.Duration(i) * time.Second)
	}
	xc.tokens[key(0)].used = base.Add(time.Minute) // caller 0 called again: caller 1 is the least recent
	xc.put(key(3), &exchangedToken{token: "tok-3", expiry: base.Add(time.Hour)})
	if n := xc.count(); n != 3 {
		t.Errorf("count = %d after 4 callers, want the bound 3", n)
	}
	for i, want := range []bool{true, false, true, true} {
		if _, ok := xc.get(key(i), ""); ok != want {
			t.Errorf("get(caller %d) kept = %v, want %v", i, ok, want)
		}
	}
	// An expired one goes before any live one.
	xc.tokens[key(3)].expiry = base.Add(-time.Second)
	xc.put(key(4), &exchangedToken{token: "tok-4", expiry: base.Add(time.Hour)})
	for i, want := range []bool{true, false, true, false, true} {
		if _, ok := xc.tokens[key(i)]; ok != want {
			t.Errorf("after an expiry, caller %d kept = %v, want %v", i, ok, want)
		}
	}
}

// TestExchangeOneAtATime: callers' calls that need the same caller's
// token exchanged at once make one exchange, and all get its token.
// The authorization server holds the first exchange until a second
// arrives (which it must not) or a few seconds pass.
func TestExchangeOneAtATime(t *testing.T) {
	var n atomic.Int32
	second := make(chan struct{})
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/token" {
			http.NotFound(w, r)
			return
		}
		switch n.Add(1) {
		case 1:
			select {
			case <-second:
			case <-time.After(3 * time.Second):
			}
		case 2:
			close(second)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprint("exchanged-", n.Load()), "issued_token_type": tokenTypeAccess, "token_type": "Bearer", "expires_in": 300})
	}))
	t.Cleanup(as.Close)
	u := &upstream{cfg: UpstreamConfig{Domain: "x", URL: as.URL + "/mcp", CallerIdentity: IdentityExchange,
		Exchange: &Exchange{ClientID: "c", ClientSecret: "s", TokenEndpoint: as.URL + "/token"}}}
	p := callerPath{u}
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() {
			tok, err := p.exchange(context.Background(), "the-callers-token-0123456789", "")
			if err != nil {
				t.Errorf("exchange: %v", err)
			}
			got[i] = tok
		})
	}
	wg.Wait()
	if n.Load() != 1 {
		t.Errorf("%d exchanges for one caller's concurrent calls, want 1", n.Load())
	}
	for i, tok := range got {
		if tok != got[0] || tok == "" {
			t.Errorf("call %d got %q, call 0 %q: want the one exchanged token", i, tok, got[0])
		}
	}
}

// TestExchangeRefused: each OAuth error of the token endpoint is the
// caller's error naming the server, the code and what to configure; the
// endpoint's free text, which here echoes the subject token, is never
// quoted; the error matches ErrExchange, and no token is kept.
func TestExchangeRefused(t *testing.T) {
	const subject = "the-callers-token-0123456789"
	for _, tc := range []struct {
		code   string
		status int
		want   string
	}{
		{"invalid_grant", http.StatusBadRequest, "the caller signs in again"},
		{"invalid_target", http.StatusBadRequest, "allow that audience for auth.client_id"},
		{"unauthorized_client", http.StatusBadRequest, "may not use the token-exchange grant"},
		{"invalid_client", http.StatusUnauthorized, "check auth.client_id and the secret in auth.client_secret_file"},
		{"invalid_scope", http.StatusBadRequest, "correct auth.scopes"},
		{"unsupported_grant_type", http.StatusBadRequest, `use "mode": "forward"`},
		{"server_error", http.StatusInternalServerError, "see the authorization server's log"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.ParseForm()
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				json.NewEncoder(w).Encode(map[string]string{"error": tc.code, "error_description": "refused " + r.PostForm.Get("subject_token")})
			}))
			t.Cleanup(as.Close)
			u := &upstream{cfg: UpstreamConfig{Domain: "tracker", URL: as.URL + "/mcp", CallerIdentity: IdentityExchange,
				Exchange: &Exchange{ClientID: "c", ClientSecret: "s", TokenEndpoint: as.URL + "/token"}}}
			_, err := callerPath{u}.exchange(context.Background(), subject, "")
			if err == nil {
				t.Fatal("exchange refused by the authorization server = nil error")
			}
			msg := err.Error()
			for _, want := range []string{`server "tracker"`, fmt.Sprintf("HTTP %d, %s", tc.status, tc.code), tc.want} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			if strings.Contains(msg, subject) || strings.Contains(msg, "refused the-") {
				t.Errorf("error %q quotes the subject token or the endpoint's free text", msg)
			}
			if !errors.Is(err, ErrExchange) {
				t.Errorf("error %v does not match ErrExchange", err)
			}
			if n := u.callers.exchanged.count(); n != 0 {
				t.Errorf("%d tokens kept after a refusal", n)
			}
		})
	}
}
