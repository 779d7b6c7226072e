package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
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

// startup holds requests while the start settles: the index loading and
// the upstream servers' first round of tools. It reads the live index's
// readiness signals and guards nothing of its own.
type startup struct {
	live     *search.Live
	exec     Executor     // asked which servers are still connecting
	scope    *callerScope // the servers a caller may see named
	log      *slog.Logger
	loadDone <-chan struct{} // Options.LoadDone
	wait     time.Duration   // Options.StartupWait
	fallback string          // Options.Fallback
	mode     func() string   // the exposure mode now
}

// gated reports whether tools/list and direct tool calls wait for the
// start to settle: in the modes that list catalog tools at start (auto
// mode decides on the whole catalog), and with the eager fallback, which
// may list them all once the load ends.
func (st *startup) gated() bool {
	switch st.mode() {
	case ExposeEager, ExposeCore, ExposeAuto, ExposeCompact:
		return true
	}
	return st.fallback == ExposeEager
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
	if !progress.Wait(ctx, st.log, nil, st.live.Loaded(), label+" waits", func() string { return "the index to load" }) {
		return
	}
	if st.fallback == ExposeEager {
		grace := time.NewTimer(SemanticGrace)
		select {
		case <-st.loadDone:
		case <-grace.C:
		case <-ctx.Done():
		}
		grace.Stop()
	}
	who := st.scope.callerIn(ctx)
	progress.Wait(ctx, st.log, nil, st.live.Ready(), label+" waits", func() string { return st.waitingFor(who) })
}

// waitReady blocks a meta-tool call until the live index has loaded its
// catalog (keyword first, then semantic ranking for at most
// SemanticGrace) and holds the upstreams' first round of tools, the
// startup wait passes or ctx ends: the client's initialize never waits,
// its first meta-tool call does.
func (st *startup) waitReady(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, st.wait)
	defer cancel()
	if !progress.Wait(ctx, st.log, nil, st.live.Loaded(), "a meta-tool call waits", func() string { return "the index to load" }) {
		return
	}
	grace := time.NewTimer(SemanticGrace)
	defer grace.Stop()
	select {
	case <-st.live.Settled():
	case <-grace.C:
	case <-ctx.Done():
		return
	}
	who := st.scope.callerIn(ctx)
	progress.Wait(ctx, st.log, nil, st.live.Ready(), "a meta-tool call waits", func() string { return st.waitingFor(who) })
}

// connectingReporter is implemented by executors whose servers connect
// at start (the gateway): waits name the ones they wait for.
type connectingReporter interface {
	// Connecting returns the domains whose servers have not finished
	// their first connection attempt.
	Connecting() []string
}

var _ connectingReporter = (*gateway.Gateway)(nil)

// waitingFor says what a wait for the live index's first refresh waits
// for.
func (st *startup) waitingFor(who *callers.Caller) string {
	if r, ok := st.exec.(connectingReporter); ok {
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
func (st *startup) middleware(v *view, unlisted func(*view, *mcp.CallToolRequest) *mcp.CallToolResult) mcp.Middleware {
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
					if msg := st.scope.unavailableToolFor(v.who, st.scope.catalogFor(v.who), name); msg != "" {
						return errorResult("%s", msg), nil
					}
					if res := unlisted(v, req.(*mcp.CallToolRequest)); res != nil {
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
