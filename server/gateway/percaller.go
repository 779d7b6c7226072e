package gateway

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
)

// Per-caller upstream identity (issue 45, item 1): an upstream whose
// config says CallerIdentity runs each tool call on a session of the
// calling client's own, opened with that caller's bearer token, instead
// of the upstream's one shared session. The shared session (toolscout's
// own credentials: its sign-in or headers) still lists the tools,
// prompts and resources: listing stays shared, and what a caller may
// see is decided by toolscout's callers, not by the upstream.
//
// Sessions are kept by a digest of the token (a caller whose token
// changes gets a new session, and the old one goes idle), at most
// maxCallerSessions per upstream, each closed after callerIdle without a
// call. The token itself is held only by the session's HTTP transport.

// IdentityForward is the CallerIdentity that sends the caller's own
// bearer token to the upstream, as the caller sent it to toolscout.
const IdentityForward = "forward"

// ErrNoCallerToken is wrapped by the error of a call to an upstream that
// acts with each caller's identity when the call carries no bearer token
// of its caller's.
var ErrNoCallerToken = errors.New("the call carries no caller token")

const (
	// maxCallerSessions bounds the sessions one upstream keeps open for
	// its callers.
	maxCallerSessions = 64
	// callerIdle is how long a caller's session stays open without a
	// call.
	callerIdle = 5 * time.Minute
)

// callerSessions are one upstream's sessions of its callers.
type callerSessions struct {
	mu       sync.Mutex
	sessions map[[32]byte]*callerSession
	closed   bool
	idle     time.Duration // callerIdle unless a test sets it
	max      int           // maxCallerSessions unless a test sets it
	// exchanged are the callers' exchanged tokens (IdentityExchange:
	// exchange.go).
	exchanged exchangeCache
}

// callerSession is one caller's session (nil while it is opening: ready
// is closed when it is open, or failed with err).
type callerSession struct {
	ready    chan struct{}
	session  *mcp.ClientSession
	err      error
	inflight int
	used     time.Time
	timer    *time.Timer
}

// callerToken returns the bearer token of the caller of req: the
// Authorization of its own HTTP request.
func callerToken(req *mcp.CallToolRequest) string {
	if req == nil || req.Extra == nil || req.Extra.Header == nil {
		return ""
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(req.Extra.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// callerPath is an upstream's way to its callers' own sessions (auth
// identity "caller"): a type of its own so that upstream keeps to the
// life of the shared session.
type callerPath struct{ u *upstream }

// callerSession returns the session of the caller whose token is tok,
// opening it (within the connect timeout) when it has none; release
// ends the call's use of it.
func (p callerPath) callerSession(ctx context.Context, tok string) (session *mcp.ClientSession, release func(), err error) {
	u := p.u
	cs := &u.callers
	key := sha256.Sum256([]byte(tok))
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return nil, nil, classed(ErrClosing, fmt.Errorf("toolscout is shutting down: the call to server %q was cancelled; retry it", u.cfg.Domain))
	}
	if cs.sessions == nil {
		cs.sessions = map[[32]byte]*callerSession{}
	}
	s := cs.sessions[key]
	if s == nil {
		if err := cs.makeRoom(u.cfg.Domain); err != nil {
			cs.mu.Unlock()
			return nil, nil, err
		}
		s = &callerSession{ready: make(chan struct{})}
		cs.sessions[key] = s
		go p.openCaller(key, s, tok)
	}
	s.inflight++
	cs.mu.Unlock()
	release = func() {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		s.inflight--
		s.used = time.Now()
		if s.inflight == 0 && s.session != nil && !cs.closed {
			idle := cs.idleAfter()
			if s.timer == nil {
				s.timer = time.AfterFunc(idle, func() { cs.expire(key, s) })
			} else {
				s.timer.Reset(idle)
			}
		}
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		release()
		return nil, nil, ctx.Err()
	}
	if s.err != nil {
		release()
		return nil, nil, s.err
	}
	return s.session, release, nil
}

func (cs *callerSessions) idleAfter() time.Duration {
	if cs.idle > 0 {
		return cs.idle
	}
	return callerIdle
}

// makeRoom closes the least recently used idle session when the table
// is full; the caller holds cs.mu. With every session busy it refuses.
func (cs *callerSessions) makeRoom(domain string) error {
	limit := cs.max
	if limit <= 0 {
		limit = maxCallerSessions
	}
	if len(cs.sessions) < limit {
		return nil
	}
	var oldest [32]byte
	var victim *callerSession
	for k, s := range cs.sessions {
		if s.inflight == 0 && s.session != nil && (victim == nil || s.used.Before(victim.used)) {
			oldest, victim = k, s
		}
	}
	if victim == nil {
		return classed(ErrUnavailable, fmt.Errorf("server %q has calls of %d callers running, each on its own session, the most toolscout keeps open for one server; try again in a moment", domain, len(cs.sessions)))
	}
	delete(cs.sessions, oldest)
	if victim.timer != nil {
		victim.timer.Stop()
	}
	go victim.session.Close()
	return nil
}

// expire closes s (key's) when it has had no call for the idle time.
func (cs *callerSessions) expire(key [32]byte, s *callerSession) {
	cs.mu.Lock()
	if cs.sessions[key] != s || s.inflight > 0 || time.Since(s.used) < cs.idleAfter() {
		cs.mu.Unlock()
		return
	}
	delete(cs.sessions, key)
	cs.mu.Unlock()
	s.session.Close()
}

// forget drops s (key's) when its session ended or failed to open, so
// that the caller's next call opens a new one.
func (cs *callerSessions) forget(key [32]byte, s *callerSession) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.sessions[key] == s {
		delete(cs.sessions, key)
	}
	if s.timer != nil {
		s.timer.Stop()
	}
}

// closeAll closes every caller's session (the gateway closes).
func (cs *callerSessions) closeAll() {
	cs.mu.Lock()
	cs.closed = true
	all := make([]*callerSession, 0, len(cs.sessions))
	for _, s := range cs.sessions {
		all = append(all, s)
		if s.timer != nil {
			s.timer.Stop()
		}
	}
	cs.sessions = nil
	cs.mu.Unlock()
	cs.exchanged.clear()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(func() {
			<-s.ready
			if s.session != nil {
				s.session.Close()
			}
		})
	}
	wg.Wait()
}

// count returns how many caller sessions are open or opening.
func (cs *callerSessions) count() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.sessions)
}

// openCaller opens s, the session of the caller whose token is tok: as
// the shared session connects (attempts), with tok as its bearer token
// in place of toolscout's own credentials, and without listing.
func (p callerPath) openCaller(key [32]byte, s *callerSession, tok string) {
	u := p.u
	env := u.env
	defer close(s.ready)
	c := u.cfg
	c.Auth, c.CallerHeaders, c.ForwardAuthorization = nil, nil, false
	c.Headers = maps.Clone(c.Headers)
	if c.Headers == nil {
		c.Headers = map[string]string{}
	}
	for k := range c.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			delete(c.Headers, k)
		}
	}
	if c.CallerIdentity == IdentityExchange {
		c.Auth = callerExchange{p: p, tok: tok} // each request: the token exchanged, again after a 401
	} else {
		c.Headers["Authorization"] = "Bearer " + tok
	}
	secrets := env.opts.Redactor.With(tok)
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(c.connectTimeout(), cancel)
	go func() {
		select {
		case <-env.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	client := p.callerClient()
	var errs []error
	for _, a := range c.attempts(env.routes, env.log.With("domain", c.Domain), env.opts.MaxMessage, secrets) {
		session, err := client.Connect(ctx, a.tr, &mcp.ClientSessionOptions{ProtocolVersion: a.protocol})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !timer.Stop() {
			session.Close()
			break
		}
		s.session = session
		go func() {
			session.Wait()
			cancel()
			u.callers.forget(key, s)
		}()
		return
	}
	timer.Stop()
	cancel()
	u.callers.forget(key, s)
	err := errors.Join(errs...)
	if err == nil {
		err = fmt.Errorf("no answer within %s (connect)", c.connectTimeout())
	}
	if xe := (*exchangeError)(nil); errors.As(err, &xe) {
		s.err = classed(ErrUnauthorized, xe)
		return
	}
	if re := (*refusedError)(nil); errors.As(err, &re) && c.CallerIdentity == IdentityExchange {
		s.err = classed(ErrUnauthorized, fmt.Errorf("server %q refused the token its authorization server issued for this caller (%v): it is configured to act with each caller's identity by token exchange (auth.mode \"exchange\"); the token lacks a grant the server needs (auth.scopes), or is not one it accepts", c.Domain, re))
		return
	}
	if re := (*refusedError)(nil); errors.As(err, &re) {
		s.err = classed(ErrUnauthorized, fmt.Errorf("server %q refused the caller's own credentials (%v): it is configured to act with each caller's identity (auth.identity \"caller\"); the caller's token is missing a grant the server needs, or is not one it accepts", c.Domain, re))
		return
	}
	s.err = classed(ErrUnavailable, fmt.Errorf("server %q: cannot open a session with the caller's identity: %w", c.Domain, secrets.Error(err)))
}

// callerClient returns the go-sdk client of a caller's session: what
// the server asks of its client and tells it during a call goes to the
// client of that call, as on the shared session; its list changes are
// the shared session's to follow.
func (p callerPath) callerClient() *mcp.Client {
	u := p.u
	rt := u.env.routes
	copts := &mcp.ClientOptions{ProgressNotificationHandler: rt.forwardProgress}
	rt.clientRequests(&u.cfg, copts)
	client := mcp.NewClient(&mcp.Implementation{Name: "toolscout", Version: u.env.opts.Version}, copts)
	client.AddReceivingMiddleware(rt.middleware(&u.cfg))
	return client
}

// callerSessionFor returns the session to run t on for req's caller on
// an upstream that acts with each caller's identity: the tool's pins
// are checked as on the shared session.
func (p callerPath) callerSessionFor(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool) (*mcp.ClientSession, func(), error) {
	u := p.u
	if h, held := u.pins.get(t.Name); held {
		return nil, nil, heldError(t, h)
	}
	tok := callerToken(req)
	if tok == "" {
		return nil, nil, classed(ErrUnauthorized, fmt.Errorf("%w: server %q acts with each caller's own identity (auth.identity \"caller\" in its config), and this call came without a bearer token (Authorization) of its caller's; connect to toolscout over HTTP with your token. Tools of other domains work", ErrNoCallerToken, u.cfg.Domain))
	}
	if u.cfg.CallerIdentity == IdentityExchange {
		// Exchanged before the session opens, so that a refusal is
		// the call's error as the authorization server gave it.
		if _, err := p.exchange(ctx, tok, ""); err != nil {
			if uerr := unauthorized(u.cfg.Domain, err); uerr != nil {
				return nil, nil, uerr
			}
			return nil, nil, err
		}
	}
	return p.callerSession(ctx, tok)
}
