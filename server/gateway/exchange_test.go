package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
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
