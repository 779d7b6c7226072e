package upauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tokenEndpoint is an OAuth token endpoint for the refresh_token grant:
// each refresh with the current refresh token issues access-N and
// rotates the refresh token; refuse makes it answer invalid_grant.
type tokenEndpoint struct {
	srv    *httptest.Server
	hits   atomic.Int64
	refuse atomic.Bool
	gate   chan struct{} // when not nil, each refresh waits for it

	mu      sync.Mutex
	refresh string
}

func newTokenEndpoint(t *testing.T, refresh string) *tokenEndpoint {
	te := &tokenEndpoint{refresh: refresh}
	te.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := te.hits.Add(1)
		if te.gate != nil {
			<-te.gate
		}
		r.ParseForm()
		te.mu.Lock()
		defer te.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if te.refuse.Load() || r.Form.Get("grant_type") != "refresh_token" || r.Form.Get("refresh_token") != te.refresh || r.Form.Get("client_id") != "cid" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"invalid_grant","error_description":"refused %s"}`, r.Form.Get("refresh_token"))
			return
		}
		te.refresh = fmt.Sprintf("refresh-%d-secret", n)
		fmt.Fprintf(w, `{"access_token":"access-%d-secret","token_type":"Bearer","expires_in":3600,"refresh_token":%q}`, n, te.refresh)
	}))
	t.Cleanup(te.srv.Close)
	return te
}

// signedIn stores an entry for "remote" whose access token expires at
// expiry.
func signedIn(t *testing.T, te *tokenEndpoint, expiry time.Time) *Store {
	t.Helper()
	st := OpenStore(filepath.Join(t.TempDir(), FileName))
	if err := st.Put("remote", &Entry{URL: "https://remote.example/mcp", TokenURL: te.srv.URL, AuthStyle: 1, ClientID: "cid",
		AccessToken: "access-0-secret", RefreshToken: te.refresh, TokenType: "Bearer", Expiry: expiry}); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSourceRefreshesBeforeExpiry(t *testing.T) {
	for _, tc := range []struct {
		name      string
		expiresIn time.Duration
		want      string
		wantHits  int64
	}{
		{"valid", time.Hour, "access-0-secret", 0},
		{"expiring", 10 * time.Second, "access-1-secret", 1},
		{"expired", -time.Minute, "access-1-secret", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := newTokenEndpoint(t, "refresh-0-secret")
			st := signedIn(t, te, time.Now().Add(tc.expiresIn))
			var learned []string
			src := NewSource(st, "remote", "https://remote.example/mcp", nil, func(s ...string) { learned = append(learned, s...) })
			got, err := src.Token(t.Context())
			if err != nil || got != tc.want {
				t.Fatalf("Token() = %q, %v; want %q", got, err, tc.want)
			}
			if n := te.hits.Load(); n != tc.wantHits {
				t.Errorf("token endpoint hit %d times, want %d", n, tc.wantHits)
			}
			if !strings.Contains(strings.Join(learned, " "), got) {
				t.Errorf("the redactor learned %q, not the token sent %q", learned, got)
			}
			if tc.wantHits > 0 {
				e, _ := st.Get("remote")
				if e.AccessToken != got || e.RefreshToken != "refresh-1-secret" || time.Until(e.Expiry) < 50*time.Minute {
					t.Errorf("saved entry = %+v, want the refreshed tokens", e)
				}
			}
		})
	}
}

// After a 401, many requests ask for a refresh at once: one refresh is
// made, and every request gets its token.
func TestSourceOneRefreshAtATime(t *testing.T) {
	te := newTokenEndpoint(t, "refresh-0-secret")
	te.gate = make(chan struct{})
	st := signedIn(t, te, time.Now().Add(time.Hour))
	src := NewSource(st, "remote", "https://remote.example/mcp", nil, nil)
	var wg sync.WaitGroup
	got := make([]string, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Go(func() { got[i], errs[i] = src.Refresh(t.Context(), "access-0-secret") })
	}
	time.Sleep(50 * time.Millisecond) // let them queue on the lock (not a timing assertion)
	close(te.gate)
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != "access-1-secret" {
			t.Errorf("Refresh #%d = %q, %v; want access-1-secret", i, got[i], errs[i])
		}
	}
	if n := te.hits.Load(); n != 1 {
		t.Errorf("token endpoint hit %d times for 8 concurrent refreshes, want 1", n)
	}
}

// A refresh that fails says to sign in again, quotes nothing of the
// answer, and is not tried again until a new sign-in.
func TestSourceFailedRefresh(t *testing.T) {
	te := newTokenEndpoint(t, "refresh-0-secret")
	te.refuse.Store(true)
	st := signedIn(t, te, time.Now().Add(time.Hour))
	src := NewSource(st, "remote", "https://remote.example/mcp", nil, nil)
	for i := range 3 {
		_, err := src.Refresh(t.Context(), "access-0-secret")
		if !errors.Is(err, ErrSignIn) || !strings.Contains(err.Error(), "sign in again with toolscout auth login remote") {
			t.Fatalf("Refresh #%d error = %v, want ErrSignIn saying to sign in again", i, err)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("Refresh error quotes a token: %v", err)
		}
		if _, err := src.Token(t.Context()); !errors.Is(err, ErrSignIn) {
			t.Errorf("Token after a failed refresh = %v, want ErrSignIn", err)
		}
	}
	if n := te.hits.Load(); n != 1 {
		t.Errorf("token endpoint hit %d times, want 1: a failed refresh is not retried in a loop", n)
	}
	// A new sign-in (another process writes the file) is used at once.
	e, _ := st.Get("remote")
	e.AccessToken = "access-new-secret"
	if err := st.Put("remote", e); err != nil {
		t.Fatal(err)
	}
	if got, err := src.Token(t.Context()); err != nil || got != "access-new-secret" {
		t.Errorf("Token after a new sign-in = %q, %v", got, err)
	}
}

func TestSourceNeedsASignIn(t *testing.T) {
	te := newTokenEndpoint(t, "refresh-0-secret")
	st := signedIn(t, te, time.Now().Add(time.Hour))
	for _, tc := range []struct{ name, server, url, want string }{
		{"not signed in", "other", "https://remote.example/mcp", "not signed in"},
		{"moved", "remote", "https://elsewhere.example/mcp", "signed in to another URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewSource(st, tc.server, tc.url, nil, nil).Token(context.Background())
			if !errors.Is(err, ErrSignIn) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Token() = %v, want ErrSignIn: %s", err, tc.want)
			}
		})
	}
}

func TestStoreFile(t *testing.T) {
	dir := t.TempDir()
	st := OpenStore(filepath.Join(dir, "sub", FileName))
	if err := st.Put("a", &Entry{URL: "https://a.example", AccessToken: "tok-a-secret"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(st.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file mode = %v, %v; want 0600", fi.Mode(), err)
	}
	if had, err := st.Delete("a"); !had || err != nil {
		t.Errorf("Delete(a) = %v, %v", had, err)
	}
	if e, err := st.Get("a"); e != nil || err != nil {
		t.Errorf("Get after Delete = %+v, %v", e, err)
	}
	// A damaged file: a clear error that quotes none of it.
	for _, bad := range []string{`{"version":1,"servers":{"a":{"access_token":"tok-leak-secret"`, `{"version":7}`, "tok-leak-secret"} {
		os.WriteFile(st.Path(), []byte(bad), 0o600)
		_, err := st.Get("a")
		if !errors.Is(err, ErrDamaged) || strings.Contains(err.Error(), "leak") || !strings.Contains(err.Error(), "auth login") {
			t.Errorf("Get on %q = %v, want ErrDamaged, no content, what to do", bad, err)
		}
	}
}

// Two processes on one data dir (two Sources on one file: a serve and a
// replica) refresh the same refused token at once: one refresh, and the
// other uses its token instead of spending the rotated refresh token
// again (which the server would refuse: invalid_grant).
func TestSourceOneRefreshAcrossProcesses(t *testing.T) {
	te := newTokenEndpoint(t, "refresh-0-secret")
	te.gate = make(chan struct{})
	st := signedIn(t, te, time.Now().Add(time.Hour))
	a := NewSource(OpenStore(st.Path()), "remote", "https://remote.example/mcp", nil, nil)
	b := NewSource(OpenStore(st.Path()), "remote", "https://remote.example/mcp", nil, nil)
	var wg sync.WaitGroup
	var got [2]string
	var errs [2]error
	for i, src := range []*Source{a, b} {
		wg.Go(func() { got[i], errs[i] = src.Refresh(t.Context(), "access-0-secret") })
	}
	time.Sleep(50 * time.Millisecond) // both read the file before the refresh returns (not a timing assertion)
	close(te.gate)
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != "access-1-secret" {
			t.Errorf("process %d: Refresh = %q, %v; want access-1-secret", i, got[i], errs[i])
		}
	}
	if n := te.hits.Load(); n != 1 {
		t.Errorf("token endpoint hit %d times by two processes, want 1", n)
	}
}

// BenchmarkSourceToken: what each request to an OAuth upstream pays for
// its token (the credentials file locked and read: a sign-in or a
// refresh by another process is seen at once).
func BenchmarkSourceToken(b *testing.B) {
	st := OpenStore(filepath.Join(b.TempDir(), FileName))
	if err := st.Put("remote", &Entry{URL: "https://remote.example/mcp", TokenURL: "https://as.example/token", ClientID: "cid",
		AccessToken: "access-0-secret", RefreshToken: "refresh-0-secret", Expiry: time.Now().Add(time.Hour)}); err != nil {
		b.Fatal(err)
	}
	src := NewSource(st, "remote", "https://remote.example/mcp", nil, nil)
	for b.Loop() {
		if _, err := src.Token(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
