package server

import (
	"context"
	"fmt"
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

// gated reports whether tools/list and direct tool calls wait for the
// start to settle: in the modes that list catalog tools at start (auto
// mode decides on the whole catalog), and with the eager fallback, which
// may list them all once the load ends.
func (s *Server) gated() bool {
	s.mu.Lock()
	mode := s.expose.Mode
	s.mu.Unlock()
	switch mode {
	case ExposeEager, ExposeCore, ExposeAuto, ExposeCompact:
		return true
	}
	return s.fallback == ExposeEager
}

// waitListing holds a tools/list (or a call of a directly listed tool)
// until the list is complete: the catalog loaded and the upstream
// servers' tools known, within the startup wait. With the eager
// fallback it also waits for the load to end (it may fall back) as long
// as a meta-tool call waits for semantic ranking: a load that fails
// does so before its vectors or as they start (Ollama down, a data dir
// that cannot be written), and one that fails later is announced.
func (s *Server) waitListing(ctx context.Context, label string) {
	if !s.gated() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.startWait)
	defer cancel()
	if !progress.Wait(ctx, s.log, nil, s.live.Loaded(), label+" waits", func() string { return "the index to load" }) {
		return
	}
	if s.fallback == ExposeEager {
		grace := time.NewTimer(SemanticGrace)
		select {
		case <-s.loadDone:
		case <-grace.C:
		case <-ctx.Done():
		}
		grace.Stop()
	}
	who := s.callerIn(ctx)
	progress.Wait(ctx, s.log, nil, s.live.Ready(), label+" waits", func() string { return s.waitingFor(who) })
}

// waitReady blocks a meta-tool call until the live index has loaded its
// catalog (keyword first, then semantic ranking for at most
// SemanticGrace) and holds the upstreams' first round of tools, the
// startup wait passes or ctx ends: the client's initialize never waits,
// its first meta-tool call does.
func (s *Server) waitReady(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.startWait)
	defer cancel()
	if !progress.Wait(ctx, s.log, nil, s.live.Loaded(), "a meta-tool call waits", func() string { return "the index to load" }) {
		return
	}
	grace := time.NewTimer(SemanticGrace)
	defer grace.Stop()
	select {
	case <-s.live.Settled():
	case <-grace.C:
	case <-ctx.Done():
		return
	}
	who := s.callerIn(ctx)
	progress.Wait(ctx, s.log, nil, s.live.Ready(), "a meta-tool call waits", func() string { return s.waitingFor(who) })
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
func (s *Server) waitingFor(who *callers.Caller) string {
	if r, ok := s.exec.(connectingReporter); ok {
		var c []string
		for _, d := range r.Connecting() {
			if s.domainVisible(who, d) {
				c = append(c, d)
			}
		}
		if len(c) > 0 {
			return "upstream servers still connecting: " + strings.Join(c, ", ")
		}
	}
	return "the index to take in the upstream servers' tools"
}

// startupMiddleware holds tools/list and calls of directly listed tools
// until the start settles (waitListing), lists v's tools only between
// two of its changes (listSync), and answers a call of a tool whose
// server never listed its tools, or of a tool v does not list
// (unlistedCall), with what is wrong and what to call.
func (s *Server) startupMiddleware(v *view) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				ctx = progress.WithCall(ctx, req)
				return v.sync.list(ctx, next, method, req, func() { s.waitListing(ctx, "tools/list") })
			case "tools/call":
				ctx = progress.WithCall(ctx, req)
				if name := toolCalled(req); name != "" && !ownTool(name) {
					if len(name) > search.MaxNameBytes {
						// The go-sdk's "unknown tool" would echo it whole.
						return errorResult("unknown tool %s: no tool name is longer than %d bytes; find tools with discover_tools", search.Quote(name, 100), search.MaxNameBytes), nil
					}
					if s.gated() {
						s.waitListing(ctx, "a call of "+name)
					} else {
						// Not listed: answered like a meta-tool call,
						// once the catalog and the servers are in
						// (unlistedCall).
						s.waitReady(ctx)
					}
					if msg := s.unavailableToolFor(v.who, s.catalogFor(v.who), name); msg != "" {
						return errorResult("%s", msg), nil
					}
					if res := s.unlistedCall(v, req.(*mcp.CallToolRequest)); res != nil {
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

// unavailableTool says why name is not in cat when it names a tool of
// a configured server that has not listed its tools ("" otherwise): the
// server is still connecting or down, not the tool unknown.
func (s *Server) unavailableToolFor(who *callers.Caller, cat *index.Catalog, name string) string {
	domain, _, ok := strings.Cut(name, "__")
	if !ok || cat.Tool(name) != nil || cat.Domain(domain) != nil {
		return ""
	}
	why, down := s.unavailableFor(who)[domain]
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

// resolveTool is resolve, saying that a tool of a server that has not
// listed its tools is unavailable rather than unknown.
func (s *Server) resolveToolFor(who *callers.Caller, cat *index.Catalog, name string) (*index.Tool, *SchemaError) {
	t, serr := resolve(cat, name)
	if serr != nil {
		if msg := s.unavailableToolFor(who, cat, name); msg != "" {
			return nil, &SchemaError{ToolName: name, Error: msg}
		}
	}
	return t, serr
}
