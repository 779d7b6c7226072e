package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/search"

	"github.com/toolscout/toolscout/server/boot"
	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/gateway"
	"github.com/toolscout/toolscout/server/surface"
)

// Meta-tool names.
const (
	DiscoverTools = "discover_tools"
	GetToolSchema = "get_tool_schema"
	ExecuteTool   = "execute_tool"
)

// Executor runs a tool on its upstream server.
type Executor interface {
	// Execute calls the tool with already validated arguments and returns
	// the upstream result untouched. A tool it cannot run is reported with
	// an error wrapping gateway.ErrNotExecutable.
	Execute(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool, args map[string]any) (*mcp.CallToolResult, error)
}

// The gateway is the Executor cmd hands a Server, with the optional
// abilities the server looks for.
var (
	_ Executor            = (*gateway.Gateway)(nil)
	_ UnavailableReporter = (*gateway.Directory)(nil)
	_ ExecutableReporter  = (*gateway.Upstreams)(nil)
	_ FolderReporter      = (*gateway.Upstreams)(nil)
)

// Options configures a Server.
type Options struct {
	// Live is the index the server searches; after each of its refreshes
	// the server updates what tools/list shows. How far its load has
	// come reaches the server through Readiness, which holds meta-tool
	// calls at startup (see StartupWait).
	Live *search.Live
	// Executor runs tools; nil means every tool is catalog-only.
	Executor Executor
	// Expose chooses what tools/list shows besides the meta-tools.
	Expose Exposure
	// Domains, when set, are the domains the instructions name before the
	// catalog has loaded, with their sizes when known (a gateway knows its
	// servers before their tools are listed), and after it, the domains
	// of configured servers that have not listed tools.
	Domains []DomainSize
	// Fallback "eager" lists every tool directly when the meta layer
	// cannot serve: FallBackToEager, called by the command when the index
	// fails to load, and by the server after FallbackAfter search failures
	// in a row. "" never does.
	Fallback string
	// Readiness is how far the start has come (server/boot, which loads
	// the index behind the server): the one state the start-up waits,
	// Ready (/readyz) and the metrics read; it follows Live for what its
	// owner does not move (boot.Readiness.Follow). With Fallback "eager",
	// the first tools/list waits for it to be Settled, the index loaded
	// or the server fallen back (for SemanticGrace once the keyword index
	// is in), so that an index that cannot load lists every tool from the
	// first list on. Nil: boot.FromLive(Live), every state the live
	// index's.
	Readiness *boot.Readiness
	// StartupWait bounds how long a request waits for the start to settle:
	// a tools/list (in the modes that list tools directly) or a meta-tool
	// call for the catalog to load and the upstream servers' tools to be
	// known (search.DefaultStartupWait when zero).
	StartupWait time.Duration
	// InitializeWait bounds how long, counted from the server's start,
	// a client's initialize (or server/discover) waits for the index to
	// take in the upstream servers' first round of tools, so that the
	// first session's instructions say what each server is for
	// (zero never waits: the command passes DefaultInitializeWait unless
	// told otherwise). Later sessions do not wait: by then the wait has
	// passed.
	InitializeWait time.Duration
	// Instructions is text of the operator's added to the server's
	// instructions (the config's toolscout.instructions), at most
	// MaxExtraInstructions characters.
	Instructions string
	// Name and Version identify the server to clients.
	Name, Version string
	Logger        *slog.Logger
	// Metrics, when set, counts every request the server receives and
	// reports the index, sessions and upstreams (see Metrics).
	Metrics *Metrics
	// Feedback, when set, ranks searches with what agents ran after
	// theirs, and learns from each tool a caller runs after a search
	// (feedback.go), kept by FeedbackSink (nil: in memory only).
	Feedback     *search.Feedback
	FeedbackSink FeedbackSink
	// Audit, when set, receives the audit trail: one JSON line per
	// execute_tool call and per call of a tool listed directly, each
	// written whole in one Write (audit.go). AuditArguments adds the
	// calls' arguments, shortened past AuditArgumentsMax bytes.
	Audit          io.Writer
	AuditArguments bool
	// Redactor knows the secrets toolscout was configured with (nil:
	// none): the audit trail's arguments are redacted with it, and with
	// the credential of the call's own request. (What upstream servers
	// send back is the gateway's to redact: gateway.Options.Redactor.)
	Redactor *redact.Redactor
	// StructuredClients name the clients (by their clientInfo name) that
	// hand their model a result's structuredContent: their meta-tool
	// answers carry a one-line content text (structured.go).
	// DefaultStructuredClients when nil.
	StructuredClients []string
	// Callers, when set, gives each caller its own view of the catalog
	// (visibility.go): over HTTP, every request must name a caller with
	// its credential (HTTPHandler refuses the others with 401) and is
	// answered from what that caller may see. Caller is the caller of
	// the stdio client (and of anything served by MCP() directly); nil
	// sees everything.
	Callers *callers.Set
	Caller  *callers.Caller
	// Code configures code mode (Expose.Mode ExposeCode), where run_code
	// is listed instead of execute_tool; without a Runner, run_code
	// answers that it cannot run programs. Ignored in the other modes.
	Code *Code
}

// Server is toolscout's MCP server. It wires the parts that each do one
// job: callerScope (what a caller sees), startup (the waits of the first
// seconds), exposure (the views and what they list) and the handlers of
// the meta-tools, and serves them over stdio and HTTP.
type Server struct {
	live *search.Live
	eng  *search.Engine
	exec Executor
	log  *slog.Logger
	// sdkLog is log for the go-sdk, its routine records at debug
	// (sdklog.go).
	sdkLog *slog.Logger
	impl   *mcp.Implementation

	metrics  *Metrics         // nil: not counted
	surface  *surface.Surface // upstream prompts and resources; nil: none (passthrough.go)
	draining atomic.Bool      // see Drain

	scope *callerScope // what each caller sees (visibility.go)
	start *startup     // holds requests while the start settles (startup.go)
	views *viewTable   // the views, and the sessions of each (views.go)
	expo  *exposure    // what the views list (expose.go)
	meta  *metaTools   // the tools of toolscout's own (metatools.go)
	greet *greeting    // the instructions (instructions.go)
}

// FallbackAfter is the number of search failures in a row after which a
// server with Fallback "eager" lists every tool directly.
const FallbackAfter = 3

// FallBackToEager lists every tool directly (tools/list_changed tells the
// clients), so that a client keeps every tool while the meta layer cannot
// serve. It reports whether it switched.
func (s *Server) FallBackToEager(reason string) bool { return s.expo.fallBackToEager(reason) }

// New builds the MCP server with its meta-tools and instructions generated
// from the live index's catalog.
func New(opts Options) *Server {
	name, version := opts.Name, opts.Version
	if name == "" {
		name = "toolscout"
	}
	if version == "" {
		version = "dev"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	eng := opts.Live.Engine()
	ready := opts.Readiness
	if ready == nil {
		ready = boot.FromLive(opts.Live)
	} else {
		ready.Follow(opts.Live)
	}
	if opts.StartupWait <= 0 {
		opts.StartupWait = search.DefaultStartupWait
	}
	if opts.Callers != nil && opts.Caller == nil {
		opts.Caller = callers.Nobody() // fail closed
	}
	if opts.StructuredClients == nil {
		opts.StructuredClients = DefaultStructuredClients
	}
	s := &Server{live: opts.Live, eng: eng, exec: opts.Executor, log: log, sdkLog: sdkLogger(log), metrics: opts.Metrics,
		impl:    &mcp.Implementation{Name: name, Title: "toolscout", Version: version},
		surface: newSurface(opts.Executor, Options{StartupWait: opts.StartupWait, Logger: log, Expose: opts.Expose}),
		scope:   &callerScope{eng: eng, exec: opts.Executor, callers: opts.Callers, domains: opts.Domains}}
	if r, ok := ability[connectingReporter](opts.Executor); ok {
		ready.Upstreams(r.Connecting, time.Now().Add(opts.StartupWait))
	}
	s.start = &startup{live: opts.Live, exec: opts.Executor, scope: s.scope, log: log,
		ready: ready, wait: opts.StartupWait, greetWait: opts.InitializeWait, fallback: opts.Fallback, began: time.Now()}
	s.meta = &metaTools{eng: eng, exec: opts.Executor, log: log, scope: s.scope, start: s.start,
		feedback: newFeedback(opts.Feedback, opts.FeedbackSink, log),
		audit:    newAuditor(opts.Audit, opts.AuditArguments, opts.Redactor, log),
		status:   toolStatus{exec: opts.Executor}, decl: declarer{status: toolStatus{exec: opts.Executor}},
		structuredClients: opts.StructuredClients}
	if opts.Expose.Mode == ExposeCode {
		s.meta.code = opts.Code
		if s.meta.code == nil {
			s.meta.code = &Code{} // listed (toolscout tokens counts it), runs nothing
		}
	}
	s.meta.schemas = newToolSchemas(s.meta.code)
	s.views = newViewTable(s.surface)
	vb := &viewBuilder{sdkLog: s.sdkLog, impl: s.impl, surface: s.surface, metrics: s.metrics, meta: s.meta, start: s.start}
	s.expo = &exposure{eng: eng, scope: s.scope, log: log, maker: vb, views: s.views, expose: opts.Expose}
	vb.dynamic = &dynamicTools{scope: s.scope, start: s.start, expo: s.expo, status: s.meta.status, schemas: s.meta.schemas}
	s.meta.expo = s.expo
	s.meta.failures = &searchFailures{fallback: opts.Fallback, expo: s.expo}
	s.greet = &greeting{scope: s.scope, exec: opts.Executor, expo: s.expo, start: s.start, extra: strings.TrimSpace(opts.Instructions)}
	vb.greet = s.greet
	s.start.expo = s.expo
	s.expo.setPrimary(opts.Caller)
	opts.Live.Subscribe(s.expo.catalogChanged)
	// After the views': a call woken by a swap finds its tool listed.
	opts.Live.Subscribe(s.start.swaps.swapped)
	if s.metrics != nil {
		s.metrics.watch(s)
	}
	return s
}

// MCP returns the underlying go-sdk server, to run on a transport.
func (s *Server) MCP() *mcp.Server { return s.views.main().mcp }

func boolPtr(b bool) *bool { return &b }

// errorResult is a tool failure the model can act on.
func errorResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}
