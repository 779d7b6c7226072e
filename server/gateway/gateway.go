package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/pin"
	"github.com/toolscout/toolscout/internal/redact"
	txt "github.com/toolscout/toolscout/internal/text"
	"github.com/toolscout/toolscout/server/progress"
)

// ErrNotExecutable is wrapped by Execute's errors for tools that have no
// upstream server (tools listed from a catalog file).
var ErrNotExecutable = errors.New("tool has no upstream server")

// Execute's errors for a call that reached no result also match, with
// errors.Is, the class of what went wrong (their messages are unchanged:
// the model reads them). A call that failed otherwise (the server
// answered with a JSON-RPC error) matches none of them.
var (
	// ErrUnavailable: the tool's server has no session, being down or
	// still starting.
	ErrUnavailable = errors.New("upstream server unavailable")
	// ErrTimeout: the server did not answer within its timeout.
	ErrTimeout = errors.New("upstream server timed out")
	// ErrStopped: the server's session ended during the call.
	ErrStopped = errors.New("upstream server stopped during the call")
	// ErrClosing: the gateway is closing (toolscout shuts down).
	ErrClosing = errors.New("gateway closing")
)

// classedError reads as err and matches class as well.
type classedError struct{ err, class error }

func (e *classedError) Error() string   { return e.err.Error() }
func (e *classedError) Unwrap() []error { return []error{e.err, e.class} }

// classed returns err matching class too.
func classed(class, err error) error { return &classedError{err: err, class: class} }

// Options configures a Gateway.
type Options struct {
	Upstreams []UpstreamConfig
	// Base holds domains from catalog files: listed, never executed.
	Base []index.DomainSpec
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts (1 s and 60 s when zero). The wait doubles after each
	// attempt that did not last StableAfter, and starts over from
	// MinBackoff after a session that did.
	MinBackoff, MaxBackoff time.Duration
	// StableAfter is how long a session must last to reset the backoff
	// (30 s when zero).
	StableAfter time.Duration
	// Known are the tools each upstream listed on its last run (the data
	// dir keeps them): they are served, and the server marked as still
	// connecting, until it lists its tools again. With any of them, the
	// gateway knows its tools at once (WaitKnown): a server the last run
	// did not list (new in the config, or down then) adds its tools when
	// it lists them. Entries of domains not in Upstreams are ignored.
	Known []index.ListedTools
	// Keep, when set, is given every upstream's last tools each time one
	// lists tools that differ from what it listed before (for the data
	// dir to keep them for the next start).
	Keep func([]index.ListedTools) error
	// Pins, when set, holds each tool to the definition approved for it
	// (pins.go, index/pin): a tool whose listed definition changed is
	// served as approved and not run until the change is approved. Nil
	// serves what the servers list (toolscout.pin: off).
	Pins Pinner
	// PinPoll is how often the gateway looks whether the approvals
	// changed from outside, when Pins can tell (2 s when zero).
	PinPoll time.Duration
	// WordFrequency, for a server without a configured description,
	// weighs the words of its tools by their rarity in general text
	// (search.WordFrequency; nil weighs them alike).
	WordFrequency WordFrequency
	// MaxMessage bounds one message from a stdio upstream server
	// (MaxUpstreamMessage when zero).
	MaxMessage int
	// Redactor knows the secrets toolscout was configured with (nil:
	// none): what the upstream servers send back is redacted with it
	// (redact.go), and no part of a refusal's WWW-Authenticate that
	// holds one is quoted.
	Redactor *redact.Redactor
	Version  string
	Logger   *slog.Logger
}

// UpstreamStatus describes one upstream for doctor and logs.
type UpstreamStatus struct {
	Domain  string
	State   string // "connecting", "up" or "down"
	Tools   int
	Err     error
	Latency time.Duration // of the last successful connect + list
	Skipped []string      // tools left out, with the reason
}

// Gateway keeps a session to every upstream MCP server: it connects to all
// of them concurrently, lists their tools, follows list_changed, restarts
// crashed servers with backoff and routes tool calls.
type Gateway struct {
	opts   Options
	log    *slog.Logger
	ups    []*upstream
	byDom  map[string]*upstream
	change chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// closing is closed by Close: calls in flight are cancelled, so that
	// their sessions can close.
	closing   chan struct{}
	closeOnce sync.Once

	// progMu guards routes and every upstream's inflight (calls.go).
	progMu sync.Mutex
	routes map[string]*callRoute
	// bridges are the calls waiting for a client's retry (bridge.go).
	bridges map[string]*bridge

	keepMu sync.Mutex // one Keep at a time, in the order of the listings

	surf surfaceWatch // prompts and resources (surface.go)
}

type upstream struct {
	cfg   UpstreamConfig
	ready chan struct{} // closed after the first connection attempt
	// known is closed once the tools are known: at once when the last
	// run's are, else with ready.
	known chan struct{}
	// changed receives after the server announced tools/list_changed
	// (coalescing, like Gateway.change); follow re-lists.
	changed chan struct{}

	mu      sync.Mutex
	state   string
	err     error
	session *mcp.ClientSession
	tools   []index.ToolSpec
	title   string
	instr   string // the server's instructions
	skipped []string
	latency time.Duration
	// lastRun is true while tools are the last run's (Options.Known),
	// not listed by this one yet.
	lastRun bool
	// changedBy is the session that announced the change, until follow
	// re-lists it.
	changedBy *mcp.ClientSession
	// inflight are the calls of clients running on the server (under
	// Gateway.progMu; calls.go).
	inflight map[*callRoute]struct{}
	// listed is what the server listed last (before pinning: tools
	// holds what is served); held the tools held back, by name, and
	// heldLogged the listed definitions' hashes already logged.
	listed     []index.ToolSpec
	held       map[string]pin.Held
	heldLogged map[string]string
	// pinMu orders the pinning of listings (list, repin).
	pinMu sync.Mutex
	// surface is its prompts, resources and templates (surface.go).
	surface upstreamSurface
}

// New returns a gateway; Start connects it.
func New(opts Options) *Gateway {
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = time.Minute
	}
	if opts.StableAfter <= 0 {
		opts.StableAfter = 30 * time.Second
	}
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = MaxUpstreamMessage
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{opts: opts, log: log, byDom: map[string]*upstream{}, change: make(chan struct{}, 1), routes: map[string]*callRoute{}, bridges: map[string]*bridge{}, closing: make(chan struct{})}
	known := map[string]index.ListedTools{}
	for _, k := range opts.Known {
		known[k.Domain] = k
	}
	for _, c := range opts.Upstreams {
		u := &upstream{cfg: c, ready: make(chan struct{}), known: make(chan struct{}), changed: make(chan struct{}, 1), state: "connecting", inflight: map[*callRoute]struct{}{}}
		u.surface.changed = make(chan struct{}, 1)
		if k, ok := known[c.Domain]; ok && k.Tools != nil {
			// Groups and states come from this run's config, as
			// toolSpecs sets them.
			u.tools = make([]index.ToolSpec, len(k.Tools))
			for i, t := range k.Tools {
				c.applyTo(&t)
				u.tools[i] = t
			}
			// Kept by a run that did not redact them, or knew fewer
			// secrets: redacted as a listing is.
			u.tools, _ = scrubSpecs(opts.Redactor, u.tools)
			u.title, u.instr, u.lastRun = opts.Redactor.String(k.Title), opts.Redactor.String(k.Instructions), true
			close(u.known)
		}
		g.ups = append(g.ups, u)
		g.byDom[c.Domain] = u
	}
	if slices.ContainsFunc(g.ups, func(u *upstream) bool { return u.lastRun }) {
		// A head start: the last run's catalog is served at once.
		for _, u := range g.ups {
			if !u.lastRun {
				close(u.known)
			}
		}
	}
	return g
}

// Changed receives after the tools of an upstream changed (connected,
// re-listed after list_changed, went down). Notices coalesce: one receive
// may stand for several changes, and Specs has them all.
func (g *Gateway) Changed() <-chan struct{} { return g.change }

// Start connects to every upstream in the background and returns at once.
func (g *Gateway) Start(ctx context.Context) {
	ctx, g.cancel = context.WithCancel(ctx)
	for _, u := range g.ups {
		g.wg.Add(3)
		go func() {
			defer g.wg.Done()
			g.keep(ctx, u)
		}()
		go func() {
			defer g.wg.Done()
			g.follow(ctx, u)
		}()
		go func() {
			defer g.wg.Done()
			g.followSurface(ctx, u)
		}()
	}
	if st, ok := g.opts.Pins.(stamper); ok {
		g.wg.Go(func() { g.watchPins(ctx, st) })
	}
}

// WaitReady waits until every upstream has finished its first connection
// attempt (successful or not) or ctx is done.
func (g *Gateway) WaitReady(ctx context.Context) {
	g.waitEach(ctx, func(u *upstream) <-chan struct{} { return u.ready })
}

// waitEach waits until ch(u) is closed for every upstream u, or ctx is
// done.
func (g *Gateway) waitEach(ctx context.Context, ch func(u *upstream) <-chan struct{}) {
	for _, u := range g.ups {
		select {
		case <-ch(u):
		case <-ctx.Done():
			return
		}
	}
}

// WaitKnown waits until every upstream's tools are known (listed on its
// last run, or now, or it failed its first connection attempt) or ctx is
// done.
func (g *Gateway) WaitKnown(ctx context.Context) {
	g.waitEach(ctx, func(u *upstream) <-chan struct{} { return u.known })
}

// Connecting returns the domains whose servers have not finished their
// first connection attempt, for what a wait says it waits for.
func (g *Gateway) Connecting() []string {
	var out []string
	for _, u := range g.ups {
		select {
		case <-u.ready:
		default:
			out = append(out, u.cfg.Domain)
		}
	}
	return out
}

// Started returns a channel closed once domain's server has finished
// its first connection attempt (successful or not), nil when domain
// names none of the gateway's servers.
func (g *Gateway) Started(domain string) <-chan struct{} {
	if u := g.byDom[domain]; u != nil {
		return u.ready
	}
	return nil
}

// Close cancels the calls in flight, disconnects from every upstream and
// stops restarting them. The sessions close concurrently: a stdio server
// that ignores the end of its input takes a second or two to stop, and
// that should not add up over many servers.
func (g *Gateway) Close() {
	g.closeOnce.Do(func() {
		close(g.closing)
		if g.cancel != nil && len(g.ups) > 0 {
			// What ends now ends for that: the connection attempts and
			// sessions it cuts are not logged one by one (keep).
			g.log.Info("closing the upstream servers: toolscout is shutting down", "servers", len(g.ups))
		}
	})
	if g.cancel != nil {
		g.cancel()
	}
	var closing sync.WaitGroup
	for _, u := range g.ups {
		u.mu.Lock()
		s := u.session
		u.mu.Unlock()
		if s != nil {
			closing.Go(func() { s.Close() })
		}
	}
	closing.Wait()
	g.wg.Wait()
}

func (g *Gateway) notify() {
	select {
	case g.change <- struct{}{}:
	default:
	}
}

// keep connects u and reconnects it whenever its session ends, with
// exponential backoff (restartBackoff), until ctx is done.
func (g *Gateway) keep(ctx context.Context, u *upstream) {
	backoff := restartBackoff{min: g.opts.MinBackoff, max: g.opts.MaxBackoff, stable: g.opts.StableAfter}
	defer u.readyOnce()
	for ctx.Err() == nil {
		start := time.Now()
		session, err := g.connect(ctx, u)
		var wait time.Duration
		if err != nil && g.shuttingDown(ctx) {
			return // cut by Close, which said so
		}
		if err != nil {
			err = g.opts.Redactor.Error(err)
			wait = backoff.next(0)
			u.setDown(err)
			g.log.Warn("upstream unavailable", "domain", u.cfg.Domain, "err", err, "retry_in", wait)
			if first := u.readyOnce(); first {
				g.notify()
			}
		} else {
			connected := time.Now()
			u.mu.Lock()
			u.latency = connected.Sub(start)
			u.mu.Unlock()
			u.readyOnce()
			g.log.Info("upstream connected", "domain", u.cfg.Domain, "tools", len(u.toolsCopy()), "protocol", session.InitializeResult().ProtocolVersion, "latency", connected.Sub(start).Round(time.Millisecond))
			werr := session.Wait()
			if g.shuttingDown(ctx) {
				return
			}
			if werr == nil {
				werr = errors.New("connection closed")
			}
			werr = g.opts.Redactor.Error(werr)
			up := time.Since(connected)
			wait = backoff.next(up)
			u.setDown(fmt.Errorf("server stopped: %w", werr))
			g.log.Warn("upstream stopped; restarting", "domain", u.cfg.Domain, "err", werr, "up_for", up.Round(time.Millisecond), "retry_in", wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// shuttingDown reports whether the gateway is closing (or ctx, keep's,
// is done): a connection attempt or session that ends then was ended by
// the shutdown.
func (g *Gateway) shuttingDown(ctx context.Context) bool {
	select {
	case <-g.closing:
		return true
	default:
		return ctx.Err() != nil
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

func (u *upstream) toolsCopy() []index.ToolSpec {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.tools
}

// connect opens a session (trying each transport in turn) and lists the
// tools, all within the connect timeout. The session's context outlives the
// timeout (the SSE transport holds its stream on it) and ends with the
// session.
func (g *Gateway) connect(ctx context.Context, u *upstream) (*mcp.ClientSession, error) {
	cctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(u.cfg.connectTimeout(), cancel)
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
		ProgressNotificationHandler: g.forwardProgress,
	}
	g.surfaceHandlers(u, copts)
	g.clientRequests(u, copts)
	client := mcp.NewClient(&mcp.Implementation{Name: "toolscout", Version: g.opts.Version}, copts)
	client.AddReceivingMiddleware(g.rootsMiddleware(u))
	var errs []error
	for _, a := range u.cfg.attempts(g, g.log.With("domain", u.cfg.Domain), g.opts.MaxMessage, g.opts.Redactor) {
		var dial *net.OpError
		if a.retry && len(errs) > 0 && errors.As(errs[len(errs)-1], &dial) {
			continue // the server is not reachable: asking again is no use
		}
		if ct, ok := a.tr.(*commandTransport); ok {
			ct.mark = func(req *jsonrpc.Request) { g.markStdio(u, req) }
		}
		session, err := client.Connect(cctx, a.tr, &mcp.ClientSessionOptions{ProtocolVersion: a.protocol})
		if err != nil {
			if ct, ok := a.tr.(*commandTransport); ok {
				err = ct.exitedError(err, time.Second)
			}
			errs = append(errs, err)
			continue
		}
		if err := g.list(cctx, u, session, false); err != nil {
			session.Close()
			errs = append(errs, err)
			continue
		}
		g.listSurface(cctx, u, session)
		g.openLogging(cctx, u, session)
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
// listing), it tells Changed and Keep; logChange says so in the log too.
func (g *Gateway) list(ctx context.Context, u *upstream, session *mcp.ClientSession, logChange bool) error {
	var tools []*mcp.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		tools = append(tools, t)
	}
	specs, skipped, stale := toolSpecs(&u.cfg, tools)
	// Nothing of what the server listed reaches the index, the data dir
	// or a log line unredacted (redact.go).
	secrets := g.opts.Redactor
	specs, dropped := scrubSpecs(secrets, specs)
	skipped = append(skipped, dropped...)
	for i := range skipped {
		skipped[i] = secrets.String(skipped[i])
	}
	for i := range stale {
		stale[i] = secrets.String(stale[i])
	}
	for _, s := range skipped {
		g.log.Warn("upstream tool skipped", "domain", u.cfg.Domain, "tool", s)
	}
	for _, s := range stale {
		g.log.Warn("config entry names no tool of this server", "domain", u.cfg.Domain, "entry", s)
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
	u.pinMu.Lock()
	defer u.pinMu.Unlock()
	served, held, err := g.pinned(u, specs)
	if err != nil {
		return err
	}
	u.mu.Lock()
	same := u.tools != nil && reflect.DeepEqual(u.tools, served) && u.title == title && u.instr == instr
	wasLastRun := u.lastRun
	u.state, u.err, u.session, u.tools, u.skipped, u.title, u.instr, u.lastRun = "up", nil, session, served, skipped, title, instr, false
	u.listed, u.held = specs, held
	u.mu.Unlock()
	if same {
		if wasLastRun {
			g.log.Info("upstream lists the tools it listed on its last run", "domain", u.cfg.Domain, "tools", len(specs))
		}
		return nil
	}
	if logChange || wasLastRun {
		g.log.Info("upstream tools changed", "domain", u.cfg.Domain, "tools", len(specs))
	}
	g.keepListed()
	g.notify()
	return nil
}

// keepListed hands every upstream's last tools to Options.Keep.
func (g *Gateway) keepListed() {
	if g.opts.Keep == nil {
		return
	}
	g.keepMu.Lock()
	defer g.keepMu.Unlock()
	var all []index.ListedTools
	for _, u := range g.ups {
		u.mu.Lock()
		if u.tools != nil {
			all = append(all, index.ListedTools{Domain: u.cfg.Domain, Title: u.title, Instructions: u.instr, Tools: u.tools})
		}
		u.mu.Unlock()
	}
	if err := g.opts.Keep(all); err != nil {
		g.log.Warn("could not keep the upstream servers' tools in the data dir; the next start waits for the servers to list them", "err", err)
	}
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
func (g *Gateway) follow(ctx context.Context, u *upstream) {
	throttled(ctx, u, u.changed, &u.changedBy, func(session *mcp.ClientSession) { g.relist(ctx, u, session) })
}

// throttled calls do with the session that announced a change, each time
// changed says one came, at most once per relistEvery; *by is where the
// announcing session is left (under u.mu), taken and cleared here.
func throttled(ctx context.Context, u *upstream, changed <-chan struct{}, by **mcp.ClientSession, do func(*mcp.ClientSession)) {
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
		u.mu.Lock()
		session := *by
		*by = nil
		u.mu.Unlock()
		if session != nil {
			do(session)
		}
	}
}

// relist lists the tools of session anew.
func (g *Gateway) relist(ctx context.Context, u *upstream, session *mcp.ClientSession) {
	ctx, cancel := context.WithTimeout(ctx, u.cfg.connectTimeout())
	defer cancel()
	if err := g.list(ctx, u, session, true); err != nil {
		g.log.Warn("re-listing upstream tools failed", "domain", u.cfg.Domain, "err", g.opts.Redactor.Error(err))
	}
}

// Specs returns the domains to index: the base catalog's, then every
// upstream's last known tools (the last run's until it lists them, and
// kept while a server is down, so that they stay discoverable).
func (g *Gateway) Specs() []index.DomainSpec {
	specs := append([]index.DomainSpec{}, g.opts.Base...)
	for _, u := range g.ups {
		u.mu.Lock()
		tools, title, instr := u.tools, u.title, u.instr
		u.mu.Unlock()
		if tools == nil {
			continue
		}
		desc, about := u.cfg.Description, ""
		if desc == "" {
			desc = describeUpstream(title, instr, tools, g.opts.WordFrequency)
		} else {
			// What the derived description would have said of the
			// server itself still counts in ranking.
			about = describeUpstream(title, instr, nil, nil)
		}
		specs = append(specs, index.DomainSpec{Name: u.cfg.Domain, Description: desc, About: about, Tools: tools, Source: "upstream " + u.cfg.Domain})
	}
	return specs
}

// StillConnecting is Unavailable's reason for a server whose first
// connection attempt has not ended.
const StillConnecting = "still connecting"

// Unavailable returns, for each upstream that is not connected, why:
// StillConnecting, or down with its last error.
func (g *Gateway) Unavailable() map[string]string {
	out := map[string]string{}
	for _, u := range g.ups {
		u.mu.Lock()
		if u.session == nil {
			why := u.state
			if u.state == "connecting" {
				why = StillConnecting
			} else if u.err != nil {
				why = txt.Quote(u.err.Error(), 200)
			}
			out[u.cfg.Domain] = why
		}
		u.mu.Unlock()
	}
	return out
}

// Status reports every upstream.
func (g *Gateway) Status() []UpstreamStatus {
	out := make([]UpstreamStatus, 0, len(g.ups))
	for _, u := range g.ups {
		u.mu.Lock()
		out = append(out, UpstreamStatus{Domain: u.cfg.Domain, State: u.state, Tools: len(u.tools), Err: u.err, Latency: u.latency, Skipped: u.skipped})
		u.mu.Unlock()
	}
	return out
}

// Executable reports whether Execute can run tools of domain: it is a
// configured server's (connected or not yet), not only a catalog's.
func (g *Gateway) Executable(domain string) bool { return g.byDom[domain] != nil }

// Execute calls the tool on its upstream with the per-server timeout and
// the client's cancellation, and returns the upstream result untouched but
// for its _meta and the secrets it holds (redact.go), which its error is
// redacted of too.
func (g *Gateway) Execute(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool, args map[string]any) (*mcp.CallToolResult, error) {
	u := g.byDom[t.Domain]
	if u == nil {
		return nil, ErrNotExecutable
	}
	sent := u.cfg.callHeaders(ctx, req)
	secrets := g.callSecrets(req, sent)
	res, err := g.execute(ctx, req, u, t, args, sent)
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			return nil, r.redacted(secrets)
		}
		return nil, secrets.Error(err)
	}
	return scrubResult(secrets, t, res), nil
}

// execute is Execute but for the redaction; sent are the headers of the
// call's caller (callHeaders).
func (g *Gateway) execute(ctx context.Context, req *mcp.CallToolRequest, u *upstream, t *index.Tool, args map[string]any, sent callHeaderSet) (*mcp.CallToolResult, error) {
	if res, ok, err := g.resumeBridge(ctx, req, u, t); ok {
		return res, err
	}
	u.mu.Lock()
	session, state := u.session, u.state
	u.mu.Unlock()
	if session == nil && state == "connecting" {
		// Its tools are the last run's: the server is starting. Wait for
		// its first connection attempt, within the call's timeout.
		wctx, cancel := context.WithTimeout(ctx, u.cfg.timeout())
		progress.Wait(wctx, g.log, req, u.ready, fmt.Sprintf("%s waits for server %q to start", t.QualifiedName, t.Domain), func() string {
			return fmt.Sprintf("waiting for server %q to start (it gets %s to connect)", t.Domain, u.cfg.connectTimeout())
		})
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	u.mu.Lock()
	session, state, uerr := u.session, u.state, u.err
	h, held := u.held[t.Name]
	u.mu.Unlock()
	if held {
		return nil, heldError(t, h)
	}
	if session == nil && state == "connecting" {
		return nil, classed(ErrUnavailable, fmt.Errorf("server %q is still starting: it did not connect within %s (the call's timeout); try again in a moment. Tools of other domains work", t.Domain, u.cfg.timeout()))
	}
	if session == nil {
		reason := state
		if uerr != nil {
			reason = uerr.Error()
		}
		return nil, classed(ErrUnavailable, fmt.Errorf("server %q is unavailable (%s); toolscout keeps reconnecting it. Tools of other domains still work", t.Domain, reason))
	}
	params := &mcp.CallToolParams{Name: t.Name, Arguments: args}
	route, end := g.beginRoute(ctx, u, req)
	if route != nil {
		if route.token != nil {
			params.SetProgressToken(route.id)
		}
		passInput(session, req, params)
		if mustBridge(req, session) {
			return g.startBridge(ctx, req, u, t, session, params, route, end, sent)
		}
	}
	defer end()
	return g.callUpstream(ctx, u, t, session, params, route, sent)
}

// callUpstream makes the tools/call on session with the server's
// timeout, and words its failures (ErrClosing, ErrTimeout, ErrStopped,
// unauthorized). route, when not nil, is the call's (calls.go).
func (g *Gateway) callUpstream(ctx context.Context, u *upstream, t *index.Tool, session *mcp.ClientSession, params *mcp.CallToolParams, route *callRoute, sent callHeaderSet) (*mcp.CallToolResult, error) {
	cctx, cancel := context.WithTimeout(withCallHeaders(ctx, sent), u.cfg.timeout())
	defer cancel()
	// A session closes only once its calls are done: a call still running
	// when the gateway closes (a server exiting after its drain) is
	// cancelled rather than waited for.
	go func() {
		select {
		case <-g.closing:
			cancel()
		case <-cctx.Done():
		}
	}()
	callCtx := cctx
	if route != nil {
		callCtx = withRoute(cctx, route)
	}
	res, err := session.CallTool(callCtx, params)
	if route != nil {
		route.drain()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		select {
		case <-g.closing:
			return nil, classed(ErrClosing, fmt.Errorf("toolscout is shutting down: the call to server %q was cancelled; retry it", t.Domain))
		default:
		}
		if errors.Is(cctx.Err(), context.DeadlineExceeded) {
			return nil, classed(ErrTimeout, fmt.Errorf("server %q did not answer within %s (its timeout); tools of other domains still work", t.Domain, u.cfg.timeout()))
		}
		if uerr := unauthorized(t.Domain, err); uerr != nil {
			return nil, uerr
		}
		if connectionLost(err) {
			return nil, classed(ErrStopped, fmt.Errorf("server %q stopped during the call (%v); toolscout is restarting it. Tools of other domains still work", t.Domain, err))
		}
		if r := refused(t.Domain, err); r != nil {
			return nil, r
		}
		return nil, fmt.Errorf("server %q: %w", t.Domain, err)
	}
	res.Meta = nil // the upstream's serverInfo must not leak through
	return res, nil
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

// forwardProgress relays an upstream's progress notification to the client
// whose call it belongs to, under that client's own token, on its call.
func (g *Gateway) forwardProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	id, _ := req.Params.ProgressToken.(string)
	g.progMu.Lock()
	r := g.routes[id]
	g.progMu.Unlock()
	if r == nil || r.token == nil {
		return
	}
	defer r.done()
	p := *req.Params
	p.ProgressToken = r.token
	p.Meta = nil
	p.Message = g.opts.Redactor.String(p.Message)
	_ = r.ss.NotifyProgress(context.WithoutCancel(r.ctx), &p)
}

// ConfiguredDescriptions returns, for every upstream, the description
// its config gives ("" when none): what the server's instructions say a
// server is for, before what the gateway derives for ranking.
func (g *Gateway) ConfiguredDescriptions() map[string]string {
	out := make(map[string]string, len(g.ups))
	for _, u := range g.ups {
		out[u.cfg.Domain] = u.cfg.Description
	}
	return out
}

// Titles returns each upstream's title for itself (its serverInfo title,
// else its name; from its initialize answer, or the last run's until it
// connects), for the servers that gave one.
func (g *Gateway) Titles() map[string]string {
	out := map[string]string{}
	for _, u := range g.ups {
		u.mu.Lock()
		if s := strings.TrimSpace(u.title); s != "" {
			out[u.cfg.Domain] = s
		}
		u.mu.Unlock()
	}
	return out
}

// Instructions returns each upstream's own instructions (from its
// initialize answer, or the last run's until it connects), for the
// servers that gave any.
func (g *Gateway) Instructions() map[string]string {
	out := map[string]string{}
	for _, u := range g.ups {
		u.mu.Lock()
		if s := strings.TrimSpace(u.instr); s != "" {
			out[u.cfg.Domain] = s
		}
		u.mu.Unlock()
	}
	return out
}

// Folders returns the folders domain's server was given on its command
// line: the arguments that are absolute paths of existing directories
// (the filesystem server's allowed directories), cleaned. None for a
// remote server or an unknown domain.
func (g *Gateway) Folders(domain string) []string {
	u := g.byDom[domain]
	if u == nil || u.cfg.Command == "" {
		return nil
	}
	var out []string
	for _, a := range u.cfg.Args {
		if !filepath.IsAbs(a) {
			continue
		}
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			out = append(out, filepath.Clean(a))
		}
	}
	return out
}
