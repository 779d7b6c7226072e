package callers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// RemoteKeysOptions configures NewRemoteKeys.
type RemoteKeysOptions struct {
	// URL is the issuer's JWKS URL; "" finds it in the authorization
	// server metadata of Issuer (RFC 8414, or OpenID Connect discovery),
	// on first use.
	URL, Issuer string
	// Client makes the requests (a client with a 10 s timeout when nil).
	Client *http.Client
	// MaxBytes bounds a JWKS document (DefaultMaxJWKSBytes when zero).
	MaxBytes int64
	// MinRefresh is the least time between two fetches that a token
	// with an unknown key id asks for (DefaultMinRefresh when zero):
	// tokens naming made-up keys cannot make toolscout hammer the
	// issuer.
	MinRefresh time.Duration
	// MaxAge is how long a fetched set is used before it is fetched
	// again (DefaultMaxAge when zero); when that fails, the last good
	// set stays.
	MaxAge time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log says when the set is fetched and when that fails.
	Log *slog.Logger
}

// Defaults of RemoteKeysOptions.
const (
	DefaultMaxJWKSBytes = 1 << 20
	DefaultMinRefresh   = 10 * time.Second
	DefaultMaxAge       = time.Hour
	defaultFetchTimeout = 10 * time.Second
)

// RemoteKeys is an issuer's key set fetched by URL: cached, fetched
// again when older than MaxAge or when a token names a key it does not
// hold (at most once per MinRefresh), bounded in size and time. It is
// safe for concurrent use. One fetch runs at a time, and a request
// waits for one only when it needs it: the first, or a key id not in the
// set; a set that is only old is fetched again in the background while
// the cached one answers, so that an identity provider that is slow or
// down does not hold up tokens of known keys.
type RemoteKeys struct {
	o RemoteKeysOptions

	mu       sync.Mutex
	url      string // resolved
	set      *jose.JSONWebKeySet
	fetched  time.Time // of set
	tried    time.Time // last fetch started, good or not
	lastErr  error
	failures int
	running  chan struct{} // closed when the fetch under way ends; nil when none
}

var _ KeySource = (*RemoteKeys)(nil)

// NewRemoteKeys returns o's key source; nothing is fetched until a key
// is needed.
func NewRemoteKeys(o RemoteKeysOptions) *RemoteKeys {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: defaultFetchTimeout}
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxJWKSBytes
	}
	if o.MinRefresh <= 0 {
		o.MinRefresh = DefaultMinRefresh
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &RemoteKeys{o: o, url: o.URL}
}

// KeySet returns the issuer's keys: the cached set, or a fresh one when
// there is none yet or when refresh asks and the last fetch is
// MinRefresh ago (a set older than MaxAge is fetched again in the
// background). A fetch that fails keeps the last good set (and is
// logged); with no set yet, its error is returned.
func (r *RemoteKeys) KeySet(ctx context.Context, refresh bool) (*jose.JSONWebKeySet, error) {
	r.mu.Lock()
	now := r.o.Now()
	limited := !r.tried.IsZero() && now.Sub(r.tried) < r.o.MinRefresh
	switch {
	case r.set != nil && !refresh:
		if now.Sub(r.fetched) >= r.o.MaxAge && !limited && r.running == nil {
			r.start(now)
			go r.run(context.WithoutCancel(ctx))
		}
		set := r.set
		r.mu.Unlock()
		return set, nil
	case limited && r.running == nil:
		set, err := r.set, r.lastErr
		r.mu.Unlock()
		if set == nil {
			return nil, err
		}
		return set, nil
	}
	// No set yet, or a key id not in it: wait for a fetch, the one under
	// way or a new one.
	done := r.running
	if done == nil {
		r.start(now)
		r.mu.Unlock()
		r.run(ctx)
	} else {
		r.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.set == nil {
		return nil, r.lastErr
	}
	return r.set, nil
}

// start marks a fetch under way. r.mu is held.
func (r *RemoteKeys) start(now time.Time) {
	r.tried, r.running = now, make(chan struct{})
}

// run fetches the set and records the outcome; the fetch is bounded by
// defaultFetchTimeout whatever ctx allows.
func (r *RemoteKeys) run(ctx context.Context) {
	r.mu.Lock()
	url := r.url
	r.mu.Unlock()
	set, url, err := r.fetch(ctx, url)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.url = url
	close(r.running)
	r.running = nil
	if err != nil {
		r.lastErr, r.failures = err, r.failures+1
		if r.set != nil {
			r.o.Log.Warn("fetching the issuer's keys failed: keeping the last good ones", "url", url, "fetched", r.fetched.Format(time.RFC3339), "err", err)
		}
		return
	}
	if r.set == nil || r.failures > 0 || len(set.Keys) != len(r.set.Keys) {
		r.o.Log.Info("the issuer's keys fetched", "url", url, "keys", len(set.Keys))
	}
	r.set, r.fetched, r.lastErr, r.failures = set, r.o.Now(), nil, 0
}

// Status says what the source holds, for doctor: how many keys, fetched
// when, from where, and the last error.
func (r *RemoteKeys) Status() (keys int, fetched time.Time, url string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.set != nil {
		keys = len(r.set.Keys)
	}
	return keys, r.fetched, r.url, r.lastErr
}

// fetch resolves url when it is "" and reads the set; it returns the
// URL it read.
func (r *RemoteKeys) fetch(ctx context.Context, url string) (*jose.JSONWebKeySet, string, error) {
	ctx, cancel := context.WithTimeout(ctx, defaultFetchTimeout)
	defer cancel()
	if url == "" {
		asm, err := auth.GetAuthServerMetadata(ctx, r.o.Issuer, r.o.Client)
		if err != nil {
			return nil, "", fmt.Errorf("the metadata of issuer %s: %v", r.o.Issuer, err)
		}
		if asm == nil || asm.JWKSURI == "" {
			return nil, "", fmt.Errorf("issuer %s publishes no metadata with a jwks_uri at its well-known URLs: give toolscout.oauth.jwks_url", r.o.Issuer)
		}
		url = asm.JWKSURI
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, url, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	res, err := r.o.Client.Do(req)
	if err != nil {
		return nil, url, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, url, fmt.Errorf("GET %s: %s", url, res.Status)
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "" && mt != "application/json" && mt != "application/jwk-set+json" {
		return nil, url, fmt.Errorf("GET %s: content type %q, not a JWKS", url, mt)
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, r.o.MaxBytes+1))
	if err != nil {
		return nil, url, fmt.Errorf("GET %s: %v", url, err)
	}
	if int64(len(data)) > r.o.MaxBytes {
		return nil, url, fmt.Errorf("GET %s: the key set is over %d bytes", url, r.o.MaxBytes)
	}
	set, err := ParseKeys(data)
	if err != nil {
		return nil, url, fmt.Errorf("GET %s: %v", url, err)
	}
	return set, url, nil
}

// StaticKeys is a key set that does not change (a JWKS file read by
// cmd, which re-reads it and replaces the callers when it changes).
type StaticKeys struct{ Set *jose.JSONWebKeySet }

var _ KeySource = StaticKeys{}

// KeySet returns the set.
func (k StaticKeys) KeySet(context.Context, bool) (*jose.JSONWebKeySet, error) {
	if k.Set == nil {
		return nil, errors.New("no keys")
	}
	return k.Set, nil
}
