package gateway

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/redact"
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
//
// Each server's life is an upstream's (upstream.go's config, life.go):
// its session, lists, pins and restarts. The Gateway starts and closes
// them, routes calls between them, and is the source of their domains
// (Specs, Changed, WaitKnown); what else is asked across them is
// answered by a type of its own, each in its own file, that callers
// reach through an accessor: the upstreams' state by domain
// ([Gateway.Upstreams], fleet.go), what they serve and say of
// themselves ([Gateway.Directory], directory.go), and their prompts and
// resources ([Gateway.Surfaces], surface.go).
type Gateway struct {
	fleet *Upstreams
	dir   *Directory
	surf  *Surfaces

	opts   Options
	log    *slog.Logger
	env    *shared
	change chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// closing is closed by Close: calls in flight are cancelled, so that
	// their sessions can close.
	closing   chan struct{}
	closeOnce sync.Once
}

// shared is what a gateway's upstreams share: its options and log, the
// calls of clients in flight (calls.go, bridge.go), and whom to tell when
// what an upstream serves changed.
type shared struct {
	opts    *Options
	log     *slog.Logger
	routes  *routes
	bridges *bridges
	closing <-chan struct{}
	// notify tells Changed; toolsChanged keeps every upstream's tools
	// (Options.Keep) first; surfaceChanged tells the WatchSurface
	// functions.
	notify, toolsChanged func()
	surfaceChanged       func(domain, uri string)
}

// shuttingDown reports whether the gateway is closing (or ctx, an
// upstream's run's, is done): a connection attempt or session that ends
// then was ended by the shutdown.
func (s *shared) shuttingDown(ctx context.Context) bool {
	select {
	case <-s.closing:
		return true
	default:
		return ctx.Err() != nil
	}
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
	g := &Gateway{opts: opts, log: log, change: make(chan struct{}, 1), closing: make(chan struct{})}
	f := &Upstreams{byDom: map[string]*upstream{}}
	g.fleet = f
	g.dir = &Directory{f: f, base: opts.Base, wf: opts.WordFrequency, keep: opts.Keep, log: log}
	g.surf = &Surfaces{f: f, secrets: opts.Redactor}
	g.env = &shared{opts: &g.opts, log: log, routes: newRoutes(opts.Redactor, opts.MaxMessage), bridges: &bridges{byID: map[string]*bridge{}}, closing: g.closing,
		notify: g.notify, toolsChanged: func() { g.dir.save(); g.notify() }, surfaceChanged: g.surf.tell}
	known := map[string]index.ListedTools{}
	for _, k := range opts.Known {
		known[k.Domain] = k
	}
	for _, c := range opts.Upstreams {
		var last *index.ListedTools
		if k, ok := known[c.Domain]; ok && k.Tools != nil {
			last = &k
		}
		u := newUpstream(c, g.env, last)
		f.ups = append(f.ups, u)
		f.byDom[c.Domain] = u
	}
	if slices.ContainsFunc(f.ups, func(u *upstream) bool { return u.lastRun }) {
		// A head start: the last run's catalog is served at once.
		for _, u := range f.ups {
			if !u.lastRun {
				close(u.known)
			}
		}
	}
	return g
}

// Upstreams returns the upstream servers by domain: their state.
func (g *Gateway) Upstreams() *Upstreams { return g.fleet }

// Directory returns what the upstream servers serve and say of
// themselves.
func (g *Gateway) Directory() *Directory { return g.dir }

// Surfaces returns the upstream servers' prompts, resources and
// templates.
func (g *Gateway) Surfaces() *Surfaces { return g.surf }

// Specs returns the domains to index (Directory.Specs): with Changed and
// WaitKnown, the gateway is a source of domains for search.Live.
func (g *Gateway) Specs() []index.DomainSpec { return g.dir.Specs() }

// WaitKnown waits until every upstream's tools are known (listed on its
// last run, or now, or it failed its first connection attempt) or ctx is
// done.
func (g *Gateway) WaitKnown(ctx context.Context) { g.fleet.WaitKnown(ctx) }

// WaitReady waits until every upstream has finished its first connection
// attempt (successful or not) or ctx is done.
func (g *Gateway) WaitReady(ctx context.Context) { g.fleet.WaitReady(ctx) }

// Changed receives after the tools of an upstream changed (connected,
// re-listed after list_changed, went down). Notices coalesce: one receive
// may stand for several changes, and Specs has them all.
func (g *Gateway) Changed() <-chan struct{} { return g.change }

// Start connects to every upstream in the background and returns at once.
func (g *Gateway) Start(ctx context.Context) {
	ctx, g.cancel = context.WithCancel(ctx)
	for _, u := range g.fleet.ups {
		g.wg.Go(func() { u.run(ctx) })
		g.wg.Go(func() { u.follow(ctx) })
		g.wg.Go(func() { u.surface.follow(ctx, u.cfg.connectTimeout()) })
	}
	if st, ok := g.opts.Pins.(stamper); ok {
		g.wg.Go(func() { g.watchPins(ctx, st) })
	}
}

// Close cancels the calls in flight, disconnects from every upstream and
// stops restarting them. The sessions close concurrently: a stdio server
// that ignores the end of its input takes a second or two to stop, and
// that should not add up over many servers.
func (g *Gateway) Close() {
	g.closeOnce.Do(func() {
		close(g.closing)
		if g.cancel != nil && len(g.fleet.ups) > 0 {
			// What ends now ends for that: the connection attempts and
			// sessions it cuts are not logged one by one (run).
			g.log.Info("closing the upstream servers: toolscout is shutting down", "servers", len(g.fleet.ups))
		}
	})
	if g.cancel != nil {
		g.cancel()
	}
	var closing sync.WaitGroup
	for _, u := range g.fleet.ups {
		u.mu.Lock()
		s := u.session
		u.mu.Unlock()
		if s != nil {
			closing.Go(func() { s.Close() })
		}
	}
	for _, u := range g.fleet.ups {
		closing.Go(u.callers.closeAll)
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

// Execute calls the tool on its upstream with the per-server timeout and
// the client's cancellation, and returns the upstream result untouched but
// for its _meta and the secrets it holds (redact.go), which its error is
// redacted of too.
func (g *Gateway) Execute(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool, args map[string]any) (*mcp.CallToolResult, error) {
	u := g.fleet.byDom[t.Domain]
	if u == nil {
		return nil, ErrNotExecutable
	}
	sent := u.cfg.callHeaders(ctx, req)
	secrets := callSecrets(g.opts.Redactor, req, sent)
	res, err := u.execute(ctx, req, t, args, sent)
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			return nil, r.redacted(secrets)
		}
		return nil, secrets.Error(err)
	}
	return scrubResult(secrets, t, res), nil
}
