package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	txt "github.com/toolscout/toolscout/internal/text"
	"github.com/toolscout/toolscout/server/progress"
)

// upstream is one upstream server's life: its session and its restarts
// (run), its tools (list, follow) as its pins let them be served (pins),
// its prompts and resources (surface), and the calls made on it
// (sessionFor, call). What it shares with the gateway's other upstreams
// is env.
type upstream struct {
	cfg   UpstreamConfig
	env   *shared
	ready chan struct{} // closed after the first connection attempt
	// known is closed once the tools are known: at once when the last
	// run's are, else with ready.
	known chan struct{}
	// changed receives after the server announced tools/list_changed
	// (coalescing, like Gateway.Changed); follow re-lists.
	changed chan struct{}

	mu      sync.Mutex
	state   string
	err     error
	session *mcp.ClientSession
	latency time.Duration
	// changedBy is the session that announced the change, until follow
	// re-lists it.
	changedBy *mcp.ClientSession
	toolList  // under mu

	pins    pinState        // pins.go
	surface upstreamSurface // surface.go
	callers callerSessions  // percaller.go
}

// toolList is what an upstream serves of its tools and says of itself.
type toolList struct {
	tools   []index.ToolSpec // served: listed, as the pins let them be
	listed  []index.ToolSpec // what the server listed last (before pinning)
	title   string
	instr   string // the server's instructions
	skipped []string
	// lastRun is true while tools are the last run's (Options.Known),
	// not listed by this one yet.
	lastRun bool
}

// newUpstream returns the upstream of c, serving last (the tools it
// listed on the last run) until it lists its own, when not nil.
func newUpstream(c UpstreamConfig, env *shared, last *index.ListedTools) *upstream {
	u := &upstream{cfg: c, env: env, ready: make(chan struct{}), known: make(chan struct{}), changed: make(chan struct{}, 1), state: "connecting"}
	u.pins = pinState{pinner: env.opts.Pins, domain: c.Domain, log: env.log}
	u.surface = upstreamSurface{domain: c.Domain, env: env, changed: make(chan struct{}, 1)}
	if last != nil {
		// Groups and states come from this run's config, as toolSpecs
		// sets them.
		u.tools = make([]index.ToolSpec, len(last.Tools))
		for i, t := range last.Tools {
			c.applyTo(&t)
			u.tools[i] = t
		}
		// Kept by a run that did not redact them, or knew fewer secrets:
		// redacted as a listing is.
		secrets := env.opts.Redactor
		u.tools, _ = scrubSpecs(secrets, u.tools)
		u.title, u.instr, u.lastRun = secrets.String(last.Title), secrets.String(last.Instructions), true
		close(u.known)
	}
	return u
}

// run connects u and reconnects it whenever its session ends, with
// exponential backoff (restartBackoff), until ctx is done.
func (u *upstream) run(ctx context.Context) {
	env := u.env
	backoff := restartBackoff{min: env.opts.MinBackoff, max: env.opts.MaxBackoff, stable: env.opts.StableAfter}
	defer u.readyOnce()
	for ctx.Err() == nil {
		start := time.Now()
		session, err := u.connect(ctx)
		var wait time.Duration
		if err != nil && env.shuttingDown(ctx) {
			return // cut by Close, which said so
		}
		if err != nil {
			err = env.opts.Redactor.Error(err)
			wait = backoff.next(0)
			u.setDown(err)
			env.log.Warn("upstream unavailable", "domain", u.cfg.Domain, "err", err, "retry_in", wait)
			if first := u.readyOnce(); first {
				env.notify()
			}
		} else {
			connected := time.Now()
			u.mu.Lock()
			u.latency = connected.Sub(start)
			tools := len(u.tools)
			u.mu.Unlock()
			u.readyOnce()
			env.log.Info("upstream connected", "domain", u.cfg.Domain, "tools", tools, "protocol", session.InitializeResult().ProtocolVersion, "latency", connected.Sub(start).Round(time.Millisecond))
			// A shutdown closes the session itself: Close closes the
			// sessions it finds in u.session, and one whose listing
			// was still being read when Close looked is not there yet
			// (u.list stores it after the tools arrive), so it would be
			// waited for forever (a test's Close hung 11 minutes).
			stop := context.AfterFunc(ctx, func() { session.Close() })
			werr := session.Wait()
			stop()
			if env.shuttingDown(ctx) {
				return
			}
			if werr == nil {
				werr = errors.New("connection closed")
			}
			werr = env.opts.Redactor.Error(werr)
			up := time.Since(connected)
			wait = backoff.next(up)
			u.setDown(fmt.Errorf("server stopped: %w", werr))
			env.log.Warn("upstream stopped; restarting", "domain", u.cfg.Domain, "err", werr, "up_for", up.Round(time.Millisecond), "retry_in", wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// readyOnce closes u.ready (and u.known) the first time; it reports
// whether it did.
func (u *upstream) readyOnce() bool {
	select {
	case <-u.ready:
		return false
	default:
		close(u.ready)
		select {
		case <-u.known:
		default:
			close(u.known)
		}
		return true
	}
}

func (u *upstream) setDown(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.state, u.err, u.session = "down", err, nil
}

// newClient returns the go-sdk client u connects with: it follows u's
// lists, and passes what the server asks of its client and tells it to
// the client of the call it belongs to (calls.go).
func (u *upstream) newClient() *mcp.Client {
	rt := u.env.routes
	copts := &mcp.ClientOptions{
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) {
			u.mu.Lock()
			u.changedBy = req.Session
			u.mu.Unlock()
			select {
			case u.changed <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: rt.forwardProgress,
	}
	u.surface.handlers(copts)
	rt.clientRequests(&u.cfg, copts)
	client := mcp.NewClient(&mcp.Implementation{Name: "toolscout", Version: u.env.opts.Version}, copts)
	client.AddReceivingMiddleware(rt.middleware(&u.cfg))
	return client
}

// connect opens a session (trying each transport in turn) and lists the
// tools, all within the connect timeout. The session's context outlives the
// timeout (the SSE transport holds its stream on it) and ends with the
// session.
func (u *upstream) connect(ctx context.Context) (*mcp.ClientSession, error) {
	env := u.env
	cctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(u.cfg.connectTimeout(), cancel)
	client := u.newClient()
	var errs []error
	for _, a := range u.cfg.attempts(env.routes, env.log.With("domain", u.cfg.Domain), env.opts.MaxMessage, env.opts.Redactor) {
		var dial *net.OpError
		if a.retry && len(errs) > 0 && errors.As(errs[len(errs)-1], &dial) {
			continue // the server is not reachable: asking again is no use
		}
		if ct, ok := a.tr.(*commandTransport); ok {
			ct.mark = func(req *jsonrpc.Request) { env.routes.markStdio(u.cfg.Domain, req) }
		}
		session, err := client.Connect(cctx, a.tr, &mcp.ClientSessionOptions{ProtocolVersion: a.protocol})
		if err != nil {
			if ct, ok := a.tr.(*commandTransport); ok {
				err = ct.exitedError(err, time.Second)
			}
			errs = append(errs, err)
			continue
		}
		if err := u.list(cctx, session, false); err != nil {
			session.Close()
			errs = append(errs, err)
			continue
		}
		u.surface.list(cctx, session)
		openLogging(cctx, u, session)
		if !timer.Stop() {
			session.Close()
			break
		}
		go func() {
			session.Wait()
			cancel()
		}()
		return session, nil
	}
	timedOut := !timer.Stop()
	cancel()
	err := errors.Join(errs...)
	if uerr := unauthorized(u.cfg.Domain, err); uerr != nil {
		return nil, uerr // the same refusal from each attempt: said once
	}
	if timedOut && ctx.Err() == nil {
		err = fmt.Errorf("no answer within %s (connect and list tools): %w", u.cfg.connectTimeout(), err)
	}
	return nil, err
}

// list lists session's tools (all pages) into u and marks it up. When
// they differ from what u had (nothing, the last run's, the previous
// listing), it tells the gateway (toolsChanged: Changed and Keep);
// logChange says so in the log too.
func (u *upstream) list(ctx context.Context, session *mcp.ClientSession, logChange bool) error {
	var tools []*mcp.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		tools = append(tools, t)
	}
	log := u.env.log
	specs, skipped, stale := toolSpecs(&u.cfg, tools)
	// Nothing of what the server listed reaches the index, the data dir
	// or a log line unredacted (redact.go).
	secrets := u.env.opts.Redactor
	specs, dropped := scrubSpecs(secrets, specs)
	skipped = append(skipped, dropped...)
	for i := range skipped {
		skipped[i] = secrets.String(skipped[i])
	}
	for i := range stale {
		stale[i] = secrets.String(stale[i])
	}
	for _, s := range skipped {
		log.Warn("upstream tool skipped", "domain", u.cfg.Domain, "tool", s)
	}
	for _, s := range stale {
		log.Warn("config entry names no tool of this server", "domain", u.cfg.Domain, "entry", s)
	}
	title, instr := "", ""
	if ir := session.InitializeResult(); ir != nil {
		if ir.ServerInfo != nil {
			title = ir.ServerInfo.Title
			if title == "" {
				title = ir.ServerInfo.Name
			}
		}
		instr = ir.Instructions
	}
	title, instr = secrets.String(title), secrets.String(instr)
	if specs == nil {
		specs = []index.ToolSpec{} // listed: known, if empty
	}
	u.pins.order.Lock()
	defer u.pins.order.Unlock()
	served, err := u.pins.pin(specs)
	if err != nil {
		return err
	}
	u.mu.Lock()
	same := u.tools != nil && reflect.DeepEqual(u.tools, served) && u.title == title && u.instr == instr
	wasLastRun := u.lastRun
	u.state, u.err, u.session = "up", nil, session
	u.toolList = toolList{tools: served, listed: specs, title: title, instr: instr, skipped: skipped}
	u.mu.Unlock()
	if same {
		if wasLastRun {
			log.Info("upstream lists the tools it listed on its last run", "domain", u.cfg.Domain, "tools", len(specs))
		}
		return nil
	}
	if logChange || wasLastRun {
		log.Info("upstream tools changed", "domain", u.cfg.Domain, "tools", len(specs))
	}
	u.env.toolsChanged()
	return nil
}

// repin checks u's last listing against the pins again; it reports
// whether what u serves changed.
func (u *upstream) repin() bool {
	u.pins.order.Lock()
	defer u.pins.order.Unlock()
	u.mu.Lock()
	listed := u.listed
	u.mu.Unlock()
	if listed == nil {
		return false
	}
	served, err := u.pins.pin(listed)
	if err != nil {
		u.env.log.Warn("could not check the upstream tools against their pinned definitions; serving what was served", "domain", u.cfg.Domain, "err", err)
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	same := reflect.DeepEqual(u.tools, served)
	u.tools = served
	return !same
}

// relistEvery bounds how often one upstream is re-listed (and the index
// rebuilt) after its list_changed notifications: a server announcing a
// change every 20 ms cost 27 CPU-seconds a minute of re-indexing.
const relistEvery = time.Second

// follow re-lists u's tools after it announces tools/list_changed, at most
// once per relistEvery: a burst of notifications costs one tools/list and
// one re-index, and a notification that comes during the wait or the
// re-listing is followed by one more, so that the last change is always
// applied.
func (u *upstream) follow(ctx context.Context) {
	take := func() *mcp.ClientSession {
		u.mu.Lock()
		defer u.mu.Unlock()
		s := u.changedBy
		u.changedBy = nil
		return s
	}
	throttled(ctx, u.changed, take, func(session *mcp.ClientSession) {
		lctx, cancel := context.WithTimeout(ctx, u.cfg.connectTimeout())
		defer cancel()
		if err := u.list(lctx, session, true); err != nil {
			u.env.log.Warn("re-listing upstream tools failed", "domain", u.cfg.Domain, "err", u.env.opts.Redactor.Error(err))
		}
	})
}

// throttled calls do with the session that announced a change, each time
// changed says one came, at most once per relistEvery; take returns the
// announcing session and forgets it (nil: none since).
func throttled(ctx context.Context, changed <-chan struct{}, take func() *mcp.ClientSession, do func(*mcp.ClientSession)) {
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		if wait := time.Until(last.Add(relistEvery)); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		last = time.Now()
		if session := take(); session != nil {
			do(session)
		}
	}
}

// snapshot returns what u serves now, with its status.
func (u *upstream) snapshot() (toolList, UpstreamStatus) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.toolList, UpstreamStatus{Domain: u.cfg.Domain, State: u.state, Tools: len(u.tools), Err: u.err, Latency: u.latency, Skipped: u.skipped}
}

// unavailable says why u has no session (StillConnecting, or down with
// its last error); ok is false when it has one.
func (u *upstream) unavailable() (why string, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.session != nil {
		return "", false
	}
	why = u.state
	if u.state == "connecting" {
		why = StillConnecting
	} else if u.err != nil {
		why = txt.Quote(u.err.Error(), 200)
	}
	return why, true
}

// sessionFor returns the session to run t on (nil t: to ask something
// else of the server), waiting within the server's timeout for a server
// still starting (its first connection attempt), and telling the client
// of req that it waits. Its errors say why there is none, matching
// ErrUnavailable, or that t is held back by its pins (ErrHeld).
func (u *upstream) sessionFor(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool) (*mcp.ClientSession, error) {
	u.mu.Lock()
	session, state := u.session, u.state
	u.mu.Unlock()
	domain := u.cfg.Domain
	if session == nil && state == "connecting" {
		// Its tools are the last run's: the server is starting. Wait for
		// its first connection attempt, within the call's timeout.
		wctx, cancel := context.WithTimeout(ctx, u.cfg.timeout())
		if t != nil {
			progress.Wait(wctx, u.env.log, req, u.ready, fmt.Sprintf("%s waits for server %q to start", t.QualifiedName, domain), func() string {
				return fmt.Sprintf("waiting for server %q to start (it gets %s to connect)", domain, u.cfg.connectTimeout())
			})
		} else {
			select {
			case <-u.ready:
			case <-wctx.Done():
			}
		}
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	u.mu.Lock()
	session, state, uerr := u.session, u.state, u.err
	u.mu.Unlock()
	tail := ""
	if t != nil {
		if h, held := u.pins.get(t.Name); held {
			return nil, heldError(t, h)
		}
		if session == nil && state == "connecting" {
			return nil, classed(ErrUnavailable, fmt.Errorf("server %q is still starting: it did not connect within %s (the call's timeout); try again in a moment. Tools of other domains work", domain, u.cfg.timeout()))
		}
		tail = ". Tools of other domains still work"
	}
	if session == nil {
		reason := state
		if uerr != nil {
			reason = uerr.Error()
		}
		return nil, classed(ErrUnavailable, fmt.Errorf("server %q is unavailable (%s); toolscout keeps reconnecting it%s", domain, reason, tail))
	}
	return session, nil
}

// call runs f on session within the server's timeout, cancelled when
// the gateway closes, with the headers sent for the call's caller, on
// route (when not nil: calls.go), and words its error as one of a call
// of tool t (nil: of what, which is not a tool call) for the model:
// matching ErrClosing, ErrTimeout, ErrStopped or, for a tool,
// ErrUnauthorized. An error the server answered (a *jsonrpc.Error) is
// wrapped, so that errors.As finds it.
func (u *upstream) call(ctx context.Context, session *mcp.ClientSession, t *index.Tool, what string, route *callRoute, sent callHeaderSet, f func(context.Context, *mcp.ClientSession) error) error {
	cctx, cancel := context.WithTimeout(withCallHeaders(ctx, sent), u.cfg.timeout())
	defer cancel()
	// A session closes only once its calls are done: a call still running
	// when the gateway closes (a server exiting after its drain) is
	// cancelled rather than waited for.
	go func() {
		select {
		case <-u.env.closing:
			cancel()
		case <-cctx.Done():
		}
	}()
	callCtx := cctx
	if route != nil {
		callCtx = withRoute(cctx, route)
	}
	err := f(callCtx, session)
	if route != nil {
		route.drain()
	}
	if err == nil {
		return nil
	}
	if t == nil {
		err = u.env.opts.Redactor.Error(err) // a tool's error is redacted with its call's secrets (Execute)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	domain, tool := u.cfg.Domain, t != nil
	select {
	case <-u.env.closing:
		if tool {
			return classed(ErrClosing, fmt.Errorf("toolscout is shutting down: the call to server %q was cancelled; retry it", domain))
		}
		return classed(ErrClosing, fmt.Errorf("toolscout is shutting down: %s on server %q was cancelled; retry it", what, domain))
	default:
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		if tool {
			return classed(ErrTimeout, fmt.Errorf("server %q did not answer within %s (its timeout); tools of other domains still work", domain, u.cfg.timeout()))
		}
		return classed(ErrTimeout, fmt.Errorf("server %q did not answer %s within %s (its timeout)", domain, what, u.cfg.timeout()))
	}
	if tool {
		if uerr := unauthorized(domain, err); uerr != nil {
			return uerr
		}
	}
	if connectionLost(err) {
		if tool {
			return classed(ErrStopped, fmt.Errorf("server %q stopped during the call (%v); toolscout is restarting it. Tools of other domains still work", domain, err))
		}
		return classed(ErrStopped, fmt.Errorf("server %q stopped during %s (%v); toolscout is restarting it", domain, what, err))
	}
	if tool {
		if r := refused(domain, err); r != nil {
			return r
		}
	}
	return fmt.Errorf("server %q: %w", domain, err)
}

// execute is Execute but for the redaction; sent are the headers of the
// call's caller (callHeaders).
func (u *upstream) execute(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool, args map[string]any, sent callHeaderSet) (*mcp.CallToolResult, error) {
	env, domain := u.env, u.cfg.Domain
	if res, ok, err := env.bridges.resume(ctx, req, domain, t); ok {
		return res, err
	}
	var session *mcp.ClientSession
	var err error
	release, bridged := func() {}, false
	if u.cfg.CallerIdentity != "" {
		// A caller's session is in use until its call ends, which a
		// bridged call does after execute returns.
		var done func()
		if session, done, err = (callerPath{u}).callerSessionFor(ctx, req, t); err != nil {
			return nil, err
		}
		release = sync.OnceFunc(done)
		defer func() {
			if !bridged {
				release()
			}
		}()
	} else if session, err = u.sessionFor(ctx, req, t); err != nil {
		return nil, err
	}
	params := &mcp.CallToolParams{Name: t.Name, Arguments: args}
	route, end := env.routes.begin(ctx, domain, req)
	run := func(ctx context.Context) (*mcp.CallToolResult, error) {
		defer release()
		var res *mcp.CallToolResult
		err := u.call(ctx, session, t, "", route, sent, func(ctx context.Context, s *mcp.ClientSession) (err error) {
			res, err = s.CallTool(ctx, params)
			return err
		})
		if err != nil {
			return nil, err
		}
		if res != nil {
			res.Meta = nil // the upstream's serverInfo must not leak through
		}
		return res, nil
	}
	if route != nil {
		if route.token != nil {
			params.SetProgressToken(route.id)
		}
		passInput(session, req, params)
		if mustBridge(req, session) {
			bridged = true
			return env.bridges.start(ctx, req, domain, t, u.cfg.timeout(), route, end, run)
		}
	}
	defer end()
	return run(ctx)
}

// do runs f on u's session as call does (what says what it asks),
// waiting for a server still starting (sessionFor); asked for a client
// (WithClient), it is routed as a tool call is (calls.go).
func (u *upstream) do(ctx context.Context, what string, f func(context.Context, *mcp.ClientSession) error) error {
	session, err := u.sessionFor(ctx, nil, nil)
	if err != nil {
		return err
	}
	var route *callRoute
	if ss := clientOf(ctx); ss != nil {
		r, end := u.env.routes.open(ctx, u.cfg.Domain, ss, nil)
		defer end()
		route = r
	}
	return u.call(ctx, session, nil, what, route, callHeaderSet{}, f)
}

// The go-sdk's JSON-RPC codes for a call cut short because its own end
// of the connection is closing (internal/jsonrpc2: ErrClientClosing,
// ErrServerClosing).
const (
	codeClientClosing = -32003
	codeServerClosing = -32004
)

// connectionLost reports whether a call failed because the session to
// the upstream ended (the server exited or closed its pipe).
func connectionLost(err error) bool {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr.Code == codeClientClosing || werr.Code == codeServerClosing
	}
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed)
}
