package upauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// ErrSignIn is matched by the errors of an upstream that has no usable
// sign-in: none yet, signed in to another URL, or a refresh that failed.
var ErrSignIn = errors.New("sign-in needed")

// refreshBefore is how long before its expiry a token is refreshed.
const refreshBefore = 30 * time.Second

// refreshTimeout bounds one refresh at the token endpoint.
const refreshTimeout = 30 * time.Second

// Source is one upstream's access token for the gateway. Token and
// Refresh take one lock: one refresh at a time per upstream, and a
// request that waited for a refresh gets its token. A refresh that
// fails is not tried again until the credentials file holds a new
// sign-in (no loop against the authorization server).
type Source struct {
	store  *Store
	server string
	url    string
	client *http.Client
	learn  func(...string)

	log *slog.Logger

	mu      sync.Mutex
	failed  string // the access token whose refresh failed
	learned string // the access token last told to learn
	// held is a refreshed sign-in that the credentials file could not
	// take (a read-only data dir): it stands for the file's entry while
	// that entry's access token is still heldOver; a new sign-in in the
	// file replaces it.
	held     *Entry
	heldOver string
	warned   bool // the log said why held is not saved
}

// NewSource returns server's token source, for the upstream at url (an
// entry signed in to another URL is not used); client makes the refresh
// requests (nil: a client with a 30 s timeout); learn, when not nil, is
// told every token read or received, for the log's redactor.
func NewSource(st *Store, server, url string, client *http.Client, learn func(...string)) *Source {
	if client == nil {
		client = &http.Client{Timeout: refreshTimeout}
	}
	if learn == nil {
		learn = func(...string) {}
	}
	return &Source{store: st, server: server, url: url, client: client, learn: learn, log: slog.New(slog.DiscardHandler)}
}

// WithLog makes s tell log (nil: nothing) once why a refreshed token
// could not be saved; call it before s is used. It returns s.
func (s *Source) WithLog(log *slog.Logger) *Source {
	if log != nil {
		s.log = log
	}
	return s
}

// signIn is the error of an upstream without a usable sign-in.
func (s *Source) signIn(why string) error {
	return fmt.Errorf("%w: %s; sign in again with toolscout auth login %s", ErrSignIn, why, s.server)
}

// entry reads the server's entry from the file (a login since the last
// read is seen at once).
func (s *Source) entry() (*Entry, error) {
	e, err := s.store.Get(s.server)
	if err != nil {
		return nil, err
	}
	return s.check(s.heldFor(e))
}

// heldFor returns the entry that stands for the file's entry e: the one
// held in memory while e is still the entry it replaced, else e. The
// caller holds s.mu.
func (s *Source) heldFor(e *Entry) *Entry {
	if s.held == nil {
		return e
	}
	if e != nil && e.AccessToken == s.heldOver {
		return s.held
	}
	s.held, s.heldOver = nil, "" // signed in again since
	return e
}

// check returns e when it is a usable sign-in for s, and tells learn
// its secrets the first time it sees them.
func (s *Source) check(e *Entry) (*Entry, error) {
	switch {
	case e == nil || e.AccessToken == "":
		return nil, s.signIn("not signed in")
	case s.url != "" && e.URL != s.url:
		return nil, s.signIn("signed in to another URL")
	}
	if e.AccessToken != s.learned {
		s.learn(e.AccessToken, e.RefreshToken, e.ClientSecret)
		s.learned = e.AccessToken
	}
	return e, nil
}

// Token returns the access token to send, refreshed first when it
// expires within refreshBefore.
func (s *Source) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.entry()
	if err != nil {
		return "", err
	}
	if c := e.Challenge; c != nil { // refused; a new sign-in clears it
		if c.Exhausted() {
			return "", limitError{fmt.Errorf("%w: %s", ErrSignIn, c.why())}
		}
		return "", s.signIn(c.why())
	}
	if e.AccessToken == s.failed {
		return "", s.signIn("its token was refused and could not be refreshed")
	}
	if e.Expiry.IsZero() || time.Until(e.Expiry) > refreshBefore {
		return e.AccessToken, nil
	}
	if e.RefreshToken == "" && time.Now().Before(e.Expiry) {
		return e.AccessToken, nil // the last seconds of a token that cannot be refreshed
	}
	return s.refresh(ctx, e.AccessToken)
}

// Refresh is called after the upstream refused stale: it returns the
// token to retry with, refreshed unless another request already did.
func (s *Source) Refresh(ctx context.Context, stale string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.entry()
	if err != nil {
		return "", err
	}
	switch e.AccessToken {
	case s.failed:
		return "", s.signIn("its token was refused and could not be refreshed")
	case stale:
		return s.refresh(ctx, stale)
	}
	return e.AccessToken, nil // refreshed (or signed in) meanwhile
}

// refresh trades the refresh token for new tokens and saves them, with
// the credentials file locked throughout: another process that refreshed
// stale first (a serve beside this one on the data dir) is not undone,
// nor its rotated refresh token spent twice. The caller holds s.mu. Its
// error never quotes the token endpoint's answer (it may echo what was
// sent).
//
// Where the file cannot be written (a read-only data dir), the refreshed
// sign-in is held in memory instead (the call does not fail), and the
// log says so once.
func (s *Source) refresh(ctx context.Context, stale string) (string, error) {
	var out, over string
	var fresh *Entry
	err := s.store.modify(s.server, refreshTimeout+lockWait, func(e *Entry) (*Entry, error) {
		if e != nil {
			over = e.AccessToken
		}
		e, err := s.check(s.heldFor(e))
		if err != nil {
			return nil, err
		}
		if e.AccessToken != stale {
			out = e.AccessToken // refreshed, or signed in, by another process
			return nil, nil
		}
		if e.RefreshToken == "" {
			s.failed = e.AccessToken
			if e.Expiry.IsZero() || time.Now().Before(e.Expiry) {
				// Refused before its expiry (revoked, or the server now
				// trusts another authorization server): not "expired".
				return nil, s.signIn("the server refused its token and the authorization server gave no refresh token")
			}
			return nil, s.signIn("its token expired and the authorization server gave no refresh token")
		}
		cfg := oauth2.Config{ClientID: e.ClientID, ClientSecret: e.ClientSecret,
			Endpoint: oauth2.Endpoint{TokenURL: e.TokenURL, AuthStyle: oauth2.AuthStyle(e.AuthStyle)}}
		ctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, s.client), refreshTimeout)
		defer cancel()
		tok, err := refreshToken(ctx, &cfg, e.RefreshToken)
		if err != nil {
			s.failed = e.AccessToken
			why := "the refresh failed"
			var re *oauth2.RetrieveError
			if errors.As(err, &re) && errorCode(re.ErrorCode) != "" {
				why += " (" + re.ErrorCode + ")"
			} else if ctx.Err() != nil {
				why += " (no answer in time)"
			}
			return nil, s.signIn(why)
		}
		s.learn(tok.AccessToken, tok.RefreshToken)
		n := *e
		n.AccessToken, n.TokenType, n.Expiry = tok.AccessToken, tok.TokenType, tok.Expiry
		if tok.RefreshToken != "" {
			n.RefreshToken = tok.RefreshToken // rotated
		}
		out, fresh = n.AccessToken, &n
		return &n, nil
	})
	if fresh != nil && errors.Is(err, ErrReadOnly) {
		s.held, s.heldOver = fresh, over
		if !s.warned {
			s.warned = true
			s.log.Warn("an upstream's refreshed OAuth token cannot be saved: the data dir is read-only; this process keeps it in memory and refreshes it again as needed (sign in where the data dir is written, with toolscout auth login, to save one)",
				"server", s.server, "why", err)
		}
		err = nil
	}
	if err != nil {
		return "", err
	}
	s.failed = ""
	return out, nil
}

// refreshToken runs the refresh_token grant through x/oauth2 (a token
// that has expired makes its TokenSource refresh). x/oauth2 sends no
// resource parameter with it: the grant keeps the audience it had.
func refreshToken(ctx context.Context, cfg *oauth2.Config, refresh string) (*oauth2.Token, error) {
	return cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: refresh, Expiry: time.Unix(1, 0)}).Token()
}
