package callers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// introspectionEndpoint is an RFC 7662 endpoint that answers active for
// the tokens of answers, inactive for any other, and counts the
// questions per token; hold, when set, keeps every answer until it is
// closed.
type introspectionEndpoint struct {
	*httptest.Server
	mu      sync.Mutex
	answers map[string]map[string]any
	asked   map[string]int
	hold    chan struct{}
	total   atomic.Int64
}

func newIntrospectionEndpoint(t *testing.T, answers map[string]map[string]any) *introspectionEndpoint {
	e := &introspectionEndpoint{answers: answers, asked: map[string]int{}}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		tok := r.PostForm.Get("token")
		e.total.Add(1)
		e.mu.Lock()
		e.asked[tok]++
		a, ok := e.answers[tok]
		hold := e.hold
		e.mu.Unlock()
		if hold != nil {
			<-hold
		}
		if !ok {
			a = map[string]any{"active": false}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *introspectionEndpoint) times(tok string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.asked[tok]
}

// TestIntrospectionCache: an inactive answer is reused for
// InactiveCacheFor, an active one for CacheFor but never past the
// token's exp; the same token asked by many requests at once is one
// question; a flood of made-up tokens keeps the cache within MaxCached
// and does not push out the good token's answer.
func TestIntrospectionCache(t *testing.T) {
	var clock atomic.Int64
	start := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return start.Add(time.Duration(clock.Load())) }
	advance := func(d time.Duration) { clock.Add(int64(d)) }
	e := newIntrospectionEndpoint(t, map[string]map[string]any{
		"good":       {"active": true, "sub": "alice", "exp": json.Number(fmt.Sprint(start.Add(time.Hour).Unix()))},
		"short-good": {"active": true, "sub": "alice", "exp": start.Add(20 * time.Second).Unix()},
	})
	in := NewIntrospector(IntrospectorOptions{Endpoint: e.URL, CacheFor: 30 * time.Second, InactiveCacheFor: 10 * time.Second, MaxCached: 4, Now: now})
	ctx := context.Background()
	ask := func(tok string) error { _, _, err := in.introspect(ctx, tok); return err }

	// Inactive: asked once, refused from the cache until InactiveCacheFor
	// has passed, then asked again.
	for range 100 {
		if err := ask("revoked"); !errors.Is(err, errInactive) {
			t.Fatalf("introspect(revoked) = %v, want errInactive", err)
		}
	}
	if n := e.times("revoked"); n != 1 {
		t.Errorf("100 requests with an inactive token asked the endpoint %d times, want 1", n)
	}
	advance(11 * time.Second)
	ask("revoked")
	if n := e.times("revoked"); n != 2 {
		t.Errorf("after InactiveCacheFor the inactive token was asked %d times in all, want 2", n)
	}

	// Active: reused for CacheFor, but never past exp.
	for range 10 {
		if err := ask("good"); err != nil {
			t.Fatal(err)
		}
		if err := ask("short-good"); err != nil {
			t.Fatal(err)
		}
	}
	if g, s := e.times("good"), e.times("short-good"); g != 1 || s != 1 {
		t.Errorf("10 requests each asked good %d and short-good %d times, want 1 and 1", g, s)
	}
	advance(10 * time.Second) // past short-good's exp, within CacheFor
	ask("good")
	ask("short-good")
	if g, s := e.times("good"), e.times("short-good"); g != 1 || s != 2 {
		t.Errorf("past short-good's exp: good asked %d, short-good %d times, want 1 and 2 (its answer is not reused past exp)", g, s)
	}

	// Many requests at once with one made-up token: one question.
	e.mu.Lock()
	e.hold = make(chan struct{})
	e.mu.Unlock()
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Go(func() { errs <- ask("made-up-at-once") })
	}
	for e.times("made-up-at-once") == 0 {
		time.Sleep(time.Millisecond) // until the first question reached the endpoint
	}
	close(e.hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, errInactive) {
			t.Errorf("introspect(made-up-at-once) = %v, want errInactive", err)
		}
	}
	if n := e.times("made-up-at-once"); n != 1 {
		t.Errorf("50 requests at once with one made-up token asked the endpoint %d times, want 1", n)
	}
	e.mu.Lock()
	e.hold = nil
	e.mu.Unlock()

	// A flood of distinct made-up tokens: the inactive answers stay
	// within MaxCached, and the good token's answer stays.
	for i := range 100 {
		ask(fmt.Sprintf("flood-%d", i))
	}
	in.mu.Lock()
	nInactive, nActive := len(in.inactive), len(in.active)
	in.mu.Unlock()
	if nInactive > 4 || nActive > 4 {
		t.Errorf("after a flood of 100 made-up tokens the cache holds %d inactive and %d active answers, want at most 4 each", nInactive, nActive)
	}
	ask("good")
	if n := e.times("good"); n != 1 {
		t.Errorf("after the flood the good token was asked %d times in all, want 1 (its answer kept)", n)
	}
}

// TestRunChallenge: the insufficient_scope challenge of a read-only
// token names the scopes that run tools with the token's own scopes of
// toolscout's (not the others it holds), the metadata, and the
// description without what would break the header; none for a request
// that came without an access token.
func TestRunChallenge(t *testing.T) {
	const resource = "https://toolscout.example/mcp"
	e := newIntrospectionEndpoint(t, map[string]map[string]any{
		"read-token-0123456789": {"active": true, "sub": "alice", "aud": resource, "scope": "email tools.read"},
	})
	set, err := New(Options{
		OAuth: &OAuthOptions{Issuer: "https://id.example", Resource: resource, Scopes: []string{"tools.read", "tools.write", "tools.admin"}, ReadScopes: []string{"tools.read"},
			Keys: StaticKeys{testKeys(t, nil)}, Introspect: NewIntrospector(IntrospectorOptions{Endpoint: e.URL})},
		Callers: []Config{{Name: "alice", Claims: map[string]string{"sub": "alice"}, Allow: []string{"*"}},
			{Name: "ops", Tokens: []string{tokOps}, Allow: []string{"*"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	var scopes []string
	var ok bool
	h := set.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, scopes, ok = set.RunChallenge(r.Context(), "running \"x\\y\"\n\u00e9 memory__create_entities")
	}), nil)
	for _, tc := range []struct {
		token, want string
		ok          bool
	}{
		{"read-token-0123456789", `Bearer error="insufficient_scope", scope="tools.read tools.write tools.admin", resource_metadata="https://toolscout.example/.well-known/oauth-protected-resource/mcp", error_description="running xy memory__create_entities"`, true},
		{tokOps, "", false},
	} {
		got, scopes, ok = "", nil, false
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+tc.token)
		h.ServeHTTP(httptest.NewRecorder(), req)
		if got != tc.want || ok != tc.ok || tc.ok && fmt.Sprint(scopes) != "[tools.read tools.write tools.admin]" {
			t.Errorf("RunChallenge with %.4s… = %q, %v, %v; want %q, %v", tc.token, got, scopes, ok, tc.want, tc.ok)
		}
	}
}
