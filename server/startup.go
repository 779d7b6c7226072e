package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
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

// noticeAfter is how long a wait goes unreported: most are shorter.
const noticeAfter = time.Second

// noticeEvery is how often a wait sends a progress notification; a log
// line without a progress token goes out every logEvery.
const (
	noticeEvery = time.Second
	logEvery    = 10 * time.Second
)

// callKey is the context key of the request a wait reports to.
type callKey struct{}

// clientCall is a client request being answered: where its waits send
// progress.
type clientCall struct {
	req   mcp.Request
	start time.Time
	mu    sync.Mutex
	last  float64 // the last progress sent: each must be larger
}

// withCall returns ctx carrying req, unless it carries a request already.
func withCall(ctx context.Context, req mcp.Request) context.Context {
	if _, ok := ctx.Value(callKey{}).(*clientCall); ok {
		return ctx
	}
	return context.WithValue(ctx, callKey{}, &clientCall{req: req, start: time.Now()})
}

// progressTarget returns the session and progress token of req, or nil
// when the client asked for no progress.
func progressTarget(req mcp.Request) (*mcp.ServerSession, any) {
	if req == nil || reflect.ValueOf(req).IsNil() {
		return nil, nil
	}
	ss, ok := req.GetSession().(*mcp.ServerSession)
	p, pok := req.GetParams().(interface{ GetProgressToken() any })
	if !ok || ss == nil || !pok || reflect.ValueOf(p).IsNil() {
		return nil, nil
	}
	tok := p.GetProgressToken()
	if tok == nil {
		return nil, nil
	}
	return ss, tok
}

// waitNoticed waits until ready closes or ctx ends, and reports whether
// ready closed. A wait longer than noticeAfter is told to the client of
// the request in ctx (withCall; else req) as progress notifications
// every noticeEvery, with what() as their message, when it sent a
// progress token, and logged otherwise, as label ("tools/list waits").
func waitNoticed(ctx context.Context, log *slog.Logger, req mcp.Request, ready <-chan struct{}, label string, what func() string) bool {
	select {
	case <-ready:
		return true
	default:
	}
	c, ok := ctx.Value(callKey{}).(*clientCall)
	if !ok {
		c = &clientCall{req: req, start: time.Now()}
	}
	ss, token := progressTarget(c.req)
	start := time.Now()
	tick := time.NewTicker(noticeEvery)
	defer tick.Stop()
	var logged time.Time
	for {
		select {
		case <-ready:
			if !logged.IsZero() {
				log.Info(label+": done waiting", "waited", time.Since(start).Round(time.Millisecond))
			}
			return true
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				log.Warn(label+": stopped waiting", "for", what(), "waited", time.Since(start).Round(time.Millisecond))
			}
			return false
		case now := <-tick.C:
			if now.Sub(start) < noticeAfter {
				continue
			}
			if token != nil {
				c.mu.Lock()
				p := max(now.Sub(c.start).Seconds(), c.last+0.001)
				c.last = p
				c.mu.Unlock()
				_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Message: what()})
			} else if logged.IsZero() || now.Sub(logged) >= logEvery {
				logged = now
				log.Info(label, "for", what(), "waiting", now.Sub(start).Round(time.Second))
			}
		}
	}
}

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
	if !waitNoticed(ctx, s.log, nil, s.live.Loaded(), label+" waits", func() string { return "the index to load" }) {
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
	waitNoticed(ctx, s.log, nil, s.live.Ready(), label+" waits", s.waitingFor)
}

// waitReady blocks a meta-tool call until the live index has loaded its
// catalog (keyword first, then semantic ranking for at most
// SemanticGrace) and holds the upstreams' first round of tools, the
// startup wait passes or ctx ends: the client's initialize never waits,
// its first meta-tool call does.
func (s *Server) waitReady(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.startWait)
	defer cancel()
	if !waitNoticed(ctx, s.log, nil, s.live.Loaded(), "a meta-tool call waits", func() string { return "the index to load" }) {
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
	waitNoticed(ctx, s.log, nil, s.live.Ready(), "a meta-tool call waits", s.waitingFor)
}

// connectingReporter is implemented by executors whose servers connect
// at start (the gateway): waits name the ones they wait for.
type connectingReporter interface {
	// Connecting returns the domains whose servers have not finished
	// their first connection attempt.
	Connecting() []string
}

var _ connectingReporter = (*Gateway)(nil)

// waitingFor says what a wait for the live index's first refresh waits
// for.
func (s *Server) waitingFor() string {
	if r, ok := s.exec.(connectingReporter); ok {
		if c := r.Connecting(); len(c) > 0 {
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
				ctx = withCall(ctx, req)
				return v.sync.list(ctx, next, method, req, func() { s.waitListing(ctx, "tools/list") })
			case "tools/call":
				ctx = withCall(ctx, req)
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
					if msg := s.unavailableTool(s.eng.Catalog(), name); msg != "" {
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
func (s *Server) unavailableTool(cat *index.Catalog, name string) string {
	domain, _, ok := strings.Cut(name, "__")
	if !ok || cat.Tool(name) != nil || cat.Domain(domain) != nil {
		return ""
	}
	why, down := s.unavailable()[domain]
	if !down {
		return ""
	}
	msg := search.Quote(name, 100) + ": " + serverDown(domain, why)
	if why == stillConnecting {
		msg += "; try again in a moment"
	}
	return msg + ". Tools of other domains work"
}

// serverDown says why a configured server's tools are not known.
func serverDown(domain, why string) string {
	if why == stillConnecting {
		return fmt.Sprintf("server %q is still connecting and has not listed its tools yet", domain)
	}
	return fmt.Sprintf("server %q is unavailable (%s), so its tools are not known; toolscout keeps reconnecting it", domain, why)
}

// resolveTool is resolve, saying that a tool of a server that has not
// listed its tools is unavailable rather than unknown.
func (s *Server) resolveTool(cat *index.Catalog, name string) (*index.Tool, *SchemaError) {
	t, serr := resolve(cat, name)
	if serr != nil {
		if msg := s.unavailableTool(cat, name); msg != "" {
			return nil, &SchemaError{ToolName: name, Error: msg}
		}
	}
	return t, serr
}
