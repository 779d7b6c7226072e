package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/boot"
	"github.com/toolscout/toolscout/server/callers"

	"github.com/toolscout/toolscout/server/gateway"
	"github.com/toolscout/toolscout/server/progress"
)

// The first seconds of a server: a client that lists tools right after
// initialize gets the whole list, not the meta-tools alone or a list that
// grows while the index loads and upstream servers connect. A request
// that has to wait (bounded by Options.StartupWait) says so: progress
// notifications when it carries a progress token, log lines otherwise.

// SemanticGrace is how long a meta-tool call made while the index loads
// waits for semantic ranking once the keyword index answers; after it,
// the call is ranked by keyword with a notice.
const SemanticGrace = 2 * time.Second

// modeReader says the exposure mode now (exposure: the eager fallback
// changes it).
type modeReader interface {
	mode() Mode
}

var _ modeReader = (*exposure)(nil)

// startup holds requests while the start settles: the index loading and
// the upstream servers' first round of tools. It reads the start's
// readiness (boot.Readiness) and guards nothing of its own.
type startup struct {
	live      *search.Live
	exec      Executor     // asked which servers are still connecting
	scope     *callerScope // the servers a caller may see named
	log       *slog.Logger
	ready     *boot.Readiness // how far the start has come: all a wait reads of it
	wait      time.Duration   // Options.StartupWait
	greetWait time.Duration   // Options.InitializeWait
	fallback  string          // Options.Fallback
	expo      modeReader      // the exposure mode now
	began     time.Time       // when the server was made
	swaps     catalogSwaps    // the live index's refreshes
}

// catalogSwaps tells a wait that the live index swapped in a catalog.
type catalogSwaps struct {
	mu   sync.Mutex
	next chan struct{} // closed at the next swap; nil until asked for
}

// after returns a channel closed at the next swap.
func (c *catalogSwaps) after() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == nil {
		c.next = make(chan struct{})
	}
	return c.next
}

// swapped is the live index's subscriber.
func (c *catalogSwaps) swapped() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next != nil {
		close(c.next)
		c.next = nil
	}
}

// gated reports whether tools/list and direct tool calls wait for the
// start to settle: in the modes that list catalog tools at start (auto
// mode decides on the whole catalog), and with the eager fallback, which
// may list them all once the load ends.
func (st *startup) gated() bool {
	return policyOf(st.expo.mode()).gated || st.fallback == string(ExposeEager)
}

// waitListing holds a tools/list (or a call of a directly listed tool)
// until the list is complete: the catalog loaded and the upstream
// servers' tools known, within the startup wait. With the eager
// fallback it also waits for the load to end (it may fall back) as long
// as a meta-tool call waits for semantic ranking: a load that fails
// does so before its vectors or as they start (Ollama down, a data dir
// that cannot be written), and one that fails later is announced.
func (st *startup) waitListing(ctx context.Context, label string) {
	if !st.gated() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, st.wait)
	defer cancel()
	if !progress.Wait(ctx, st.log, nil, st.ready.Reached(boot.Loaded), label+" waits", func() string { return "the index to load" }) {
		return
	}
	if st.fallback == string(ExposeEager) {
		grace := time.NewTimer(SemanticGrace)
		select {
		case <-st.ready.Reached(boot.Settled):
		case <-grace.C:
		case <-ctx.Done():
		}
		grace.Stop()
	}
	who := st.scope.callerIn(ctx)
	progress.Wait(ctx, st.log, nil, st.ready.Known(), label+" waits", func() string { return st.waitingFor(who) })
}

// waitReady blocks a meta-tool call until the live index has loaded its
// catalog (keyword first, then semantic ranking for at most
// SemanticGrace) and holds the upstreams' first round of tools, the
// startup wait passes or ctx ends: the client's initialize never waits,
// its first meta-tool call does.
func (st *startup) waitReady(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, st.wait)
	defer cancel()
	if !progress.Wait(ctx, st.log, nil, st.ready.Reached(boot.Loaded), "a meta-tool call waits", func() string { return "the index to load" }) {
		return
	}
	grace := time.NewTimer(SemanticGrace)
	defer grace.Stop()
	select {
	case <-st.ready.Reached(boot.Settled):
	case <-grace.C:
	case <-ctx.Done():
		return
	}
	who := st.scope.callerIn(ctx)
	progress.Wait(ctx, st.log, nil, st.ready.Known(), "a meta-tool call waits", func() string { return st.waitingFor(who) })
}

// DefaultInitializeWait is how long, from the server's start, a client's
// initialize waits at most for the index to take in the upstream
// servers' first round of tools (Options.InitializeWait): the three npm
// reference servers listed theirs within 3.3 s of a start on a loaded
// two-core machine, and clients wait far longer for an answer to
// initialize (the TypeScript SDK's default request timeout is 60 s). A
// server whose tools come later is named without what it is for in
// that first session's instructions.
const DefaultInitializeWait = 5 * time.Second

// waitGreeting holds a client's initialize until the index knows the
// tools of every configured server it can (greetingReady), at most
// until Options.InitializeWait has passed since the server started, so
// that the first session's instructions say what each server is for.
// A start whose data dir holds the servers' tools from the last run
// waits only for the index to load them; later sessions do not wait.
func (st *startup) waitGreeting(ctx context.Context) {
	left := st.greetWait - time.Since(st.began)
	if left <= 0 || st.greetingReady() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond) // a connection attempt ending signals nothing
	defer tick.Stop()
	for !st.greetingReady() {
		select {
		case <-st.ready.Known():
			return
		case <-st.swaps.after():
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// greetingReady reports whether the instructions can say what every
// configured server is for: the index holds what its source had at
// start, or it has loaded and holds tools of every server that is in
// its first connection attempt or has listed tools (kept from the last
// run, or taken in now); a server that failed is not waited for.
func (st *startup) greetingReady() bool {
	select {
	case <-st.ready.Known():
		return true
	default:
	}
	select {
	case <-st.ready.Reached(boot.Loaded):
	default:
		return false
	}
	s, ok := ability[serverStarter](st.exec)
	r, ok2 := ability[connectingReporter](st.exec)
	if !ok || !ok2 {
		return false // a source without servers: Ready says when
	}
	return serversKnown(st.live.Engine().Catalog(), r.Connecting(), s.Status())
}

// serversKnown reports whether cat holds tools of every server that is
// in its first connection attempt (connecting) or up with tools
// (status).
func serversKnown(cat *index.Catalog, connecting []string, status []gateway.UpstreamStatus) bool {
	for _, d := range connecting {
		if cat.Domain(d) == nil {
			return false
		}
	}
	for _, u := range status {
		if u.State == "up" && u.Tools > 0 && cat.Domain(u.Domain) == nil {
			return false
		}
	}
	return true
}

// connectingReporter is implemented by executors whose servers connect
// at start (the gateway): waits name the ones they wait for.
type connectingReporter interface {
	// Connecting returns the domains whose servers have not finished
	// their first connection attempt.
	Connecting() []string
}

var _ connectingReporter = (*gateway.Upstreams)(nil)

// serverStarter is implemented by executors whose servers connect at
// start (the gateway): a call of a tool of a server in its first
// connection attempt waits for it (waitServer).
type serverStarter interface {
	// Started returns a channel closed once domain's server has
	// finished its first connection attempt, nil when domain is none of
	// its servers.
	Started(domain string) <-chan struct{}
	// Status reports every server: whether it is up, how many tools it
	// lists.
	Status() []gateway.UpstreamStatus
}

var _ serverStarter = (*gateway.Upstreams)(nil)

// waitServer holds a call of the tool name (a direct call, execute_tool,
// a run_code program's) whose server the index holds no tools of and
// that is still in its first connection attempt (it failed on the last
// run, or is new in the config: nothing was kept of it), until the
// server has answered or failed and, when it listed tools, the index
// holds them: within the startup wait, as the first tools/list waits.
// The call then runs, or says the server is unavailable, instead of
// "still connecting, try again". A tool of a server whose tools are
// known from the last run does not wait here: Execute waits for its
// server, within the call's timeout.
func (st *startup) waitServer(ctx context.Context, who *callers.Caller, name string) {
	s, ok := ability[serverStarter](st.exec)
	domain, _, qualified := strings.Cut(name, "__")
	if !ok || !qualified || st.live.Engine().Catalog().Domain(domain) != nil {
		return
	}
	started := s.Started(domain)
	if started == nil || !st.scope.domainVisible(who, domain) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, st.wait)
	defer cancel()
	label := "a call of " + name + " waits"
	if !progress.Wait(ctx, st.log, nil, started, label, func() string { return fmt.Sprintf("server %q to connect", domain) }) {
		return
	}
	for {
		swap := st.swaps.after()
		if st.live.Engine().Catalog().Domain(domain) != nil || !listsTools(s, domain) {
			return // indexed, or down (or listing nothing): said by the call
		}
		if !progress.Wait(ctx, st.log, nil, swap, label, func() string { return fmt.Sprintf("the index to take in server %q's tools", domain) }) {
			return
		}
	}
}

// listsTools reports whether domain's server is up and lists tools.
func listsTools(s serverStarter, domain string) bool {
	for _, u := range s.Status() {
		if u.Domain == domain {
			return u.State == "up" && u.Tools > 0
		}
	}
	return false
}

// waitingFor says what a wait for the live index's first refresh waits
// for.
func (st *startup) waitingFor(who *callers.Caller) string {
	if r, ok := ability[connectingReporter](st.exec); ok {
		var c []string
		for _, d := range r.Connecting() {
			if st.scope.domainVisible(who, d) {
				c = append(c, d)
			}
		}
		if len(c) > 0 {
			return "upstream servers still connecting: " + strings.Join(c, ", ")
		}
	}
	return "the index to take in the upstream servers' tools"
}

// middleware holds tools/list and calls of directly listed tools
// until the start settles (waitListing), lists v's tools only between
// two of its changes (listSync), and answers a call of a tool whose
// server never listed its tools, or of a tool v does not list
// (unlisted: metaTools.unlistedCall), with what is wrong and what to call.
func (st *startup) middleware(v *view, unlisted func(context.Context, *view, *mcp.CallToolRequest) (*mcp.CallToolResult, error)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				ctx = progress.WithCall(ctx, req)
				return v.sync.list(ctx, next, method, req, func() { st.waitListing(ctx, "tools/list") })
			case "tools/call":
				ctx = progress.WithCall(ctx, req)
				if name := toolCalled(req); name != "" && !ownTool(name) {
					if len(name) > search.MaxNameBytes {
						// The go-sdk's "unknown tool" would echo it whole.
						return errorResult("unknown tool %s: no tool name is longer than %d bytes; find tools with discover_tools", search.Quote(name, 100), search.MaxNameBytes), nil
					}
					if st.gated() {
						st.waitListing(ctx, "a call of "+name)
					} else {
						// Not listed: answered like a meta-tool call,
						// once the catalog and the servers are in
						// (unlistedCall).
						st.waitReady(ctx)
					}
					st.waitServer(ctx, v.who, name)
					if msg := st.scope.unavailableToolFor(v.who, st.scope.catalogFor(v.who), name); msg != "" {
						return errorResult("%s", msg), nil
					}
					res, err := unlisted(ctx, v, req.(*mcp.CallToolRequest))
					if err != nil {
						return nil, err
					}
					if res != nil {
						return res, nil
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}

// toolCalled returns the tool name of a tools/call request.
func toolCalled(req mcp.Request) string {
	if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
		return r.Params.Name
	}
	return ""
}

// ownTool reports whether name is one of toolscout's own tools.
func ownTool(name string) bool {
	switch name {
	case DiscoverTools, GetToolSchema, ExecuteTool, EnableDomain, DisableDomain:
		return true
	}
	return false
}

// unavailableToolFor says why name is not in cat when it names a tool of
// a configured server that has not listed its tools ("" otherwise): the
// server is still connecting or down, not the tool unknown.
func (c *callerScope) unavailableToolFor(who *callers.Caller, cat *index.Catalog, name string) string {
	domain, _, ok := strings.Cut(name, "__")
	if !ok || cat.Tool(name) != nil || cat.Domain(domain) != nil {
		return ""
	}
	why, down := c.unavailableFor(who)[domain]
	if !down {
		return ""
	}
	msg := search.Quote(name, 100) + ": " + serverDown(domain, why)
	if why == gateway.StillConnecting {
		msg += "; try again in a moment"
	}
	return msg + ". Tools of other domains work"
}

// serverDown says why a configured server's tools are not known.
func serverDown(domain, why string) string {
	if why == gateway.StillConnecting {
		return fmt.Sprintf("server %q is still connecting and has not listed its tools yet", domain)
	}
	return fmt.Sprintf("server %q is unavailable (%s), so its tools are not known; toolscout keeps reconnecting it", domain, why)
}

// resolveToolFor is resolve, saying that a tool of a server that has not
// listed its tools is unavailable rather than unknown.
func (c *callerScope) resolveToolFor(who *callers.Caller, cat *index.Catalog, name string) (*index.Tool, *SchemaError) {
	t, serr := resolve(cat, name)
	if serr != nil {
		if msg := c.unavailableToolFor(who, cat, name); msg != "" {
			return nil, &SchemaError{ToolName: name, Error: msg}
		}
	}
	return t, serr
}
