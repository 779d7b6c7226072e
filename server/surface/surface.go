package surface

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// Source is where the prompts and resources come from: the gateway.
type Source interface {
	// List returns every upstream's prompts, resources and templates
	// as last listed.
	List() []gateway.Surface
	// WatchSurface registers f, called after an upstream's lists changed
	// (uri "") and when an upstream says a subscribed resource changed.
	WatchSurface(f func(domain, uri string))
}

// Fetcher gets prompts and reads resources on their upstream, by the
// upstream's own names.
type Fetcher interface {
	GetPrompt(ctx context.Context, domain string, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error)
	ReadResource(ctx context.Context, domain string, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error)
}

// Subscriber is a Fetcher that can also subscribe to an upstream's
// resource (found by type assertion): its updates come through
// Source.WatchSurface.
type Subscriber interface {
	SubscribeResource(ctx context.Context, domain, uri string) error
	UnsubscribeResource(ctx context.Context, domain, uri string) error
}

// readyWaiter is a Source whose upstreams connect at start: the first
// lists wait for them (gateway.Surfaces.WaitReady).
type readyWaiter interface {
	WaitReady(ctx context.Context)
}

// The gateway's Surfaces (gateway.Gateway.Surfaces) are the Source,
// Fetcher and Subscriber the server hands a Surface.
var (
	_ Source      = (*gateway.Surfaces)(nil)
	_ Fetcher     = (*gateway.Surfaces)(nil)
	_ Subscriber  = (*gateway.Surfaces)(nil)
	_ Completer   = (*gateway.Surfaces)(nil)
	_ readyWaiter = (*gateway.Surfaces)(nil)
)

// Options configures a Surface.
type Options struct {
	Source  Source
	Fetcher Fetcher
	// ListTTL is the ttlMs of the lists (the 2026-07-28 protocol's
	// caching hint); reads get 0.
	ListTTL time.Duration
	// StartupWait bounds how long a list waits for upstream servers that
	// have not finished connecting (none when zero).
	StartupWait time.Duration
	Logger      *slog.Logger
	// OwnNames lists each prompt under its upstream's own name where no
	// other upstream has a prompt of that name (and that name is not
	// another's domain__name), as D__N otherwise: the tool_names
	// "server" setting. Off: every prompt is D__N.
	OwnNames bool
}

// Visibility says what the caller a server answers may see: the prompt,
// resource or resource template named name (its upstream's name for it)
// of domain; "" stands for a resource of domain that nothing lists (an
// expanded template that matches none listed, a URI from a tool result).
// *callers.Caller is one. A nil Visibility sees everything. What it hides
// is answered exactly as what does not exist: not listed, and a get,
// read, completion or subscription of it is an unknown name.
type Visibility interface {
	Visible(domain, name string) bool
}

// visible is the one check by caller.
func visible(vis Visibility, domain, name string) bool {
	return vis == nil || vis.Visible(domain, name)
}

// Surface passes the upstreams' prompts, resources and templates through
// to the MCP servers attached to it, under names and URIs of their own
// (uri.go), and gets, reads and subscribes on the right upstream.
type Surface struct {
	opts  Options
	log   *slog.Logger
	sub   Subscriber // nil: none
	comp  Completer  // nil: none
	ready readyWaiter

	st atomic.Pointer[state]

	mu      sync.Mutex // guards mirrors, subs and rebuilding st
	mirrors map[*mcp.Server]*mirror
	subs    map[upstreamURI]map[clientSub]bool
	// subsKept is len(subs) after the last pruneLocked.
	subsKept int
}

// New returns a Surface over opts.Source, following its changes.
func New(opts Options) *Surface {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Surface{opts: opts, log: log, mirrors: map[*mcp.Server]*mirror{}, subs: map[upstreamURI]map[clientSub]bool{}}
	s.sub, _ = opts.Fetcher.(Subscriber)
	s.comp, _ = opts.Fetcher.(Completer)
	s.ready, _ = opts.Source.(readyWaiter)
	s.st.Store(build(nil, opts.Source.List(), opts.OwnNames, log))
	opts.Source.WatchSurface(s.changed)
	return s
}

// changed follows the source: a list change rebuilds the state and
// brings every attached server up to date; a resource update is relayed.
func (s *Surface) changed(domain, uri string) {
	if uri != "" {
		s.updated(domain, uri)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := build(s.st.Load(), s.opts.Source.List(), s.opts.OwnNames, s.log)
	s.st.Store(st)
	for _, m := range s.mirrors {
		m.sync(st)
	}
}

// Configure sets what a server attached to s, answering the caller vis
// describes, needs from its start:
// capabilities for prompts, resources and completions (the go-sdk fixes them at
// NewServer; initialize and server/discover then say only what the
// upstreams have, see advertise) and the handlers of resource
// subscriptions.
func (s *Surface) Configure(o *mcp.ServerOptions, vis Visibility) {
	caps := o.Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}
	}
	caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	caps.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: s.sub != nil}
	o.Capabilities = caps
	if s.sub != nil {
		o.SubscribeHandler = func(ctx context.Context, req *mcp.SubscribeRequest) error { return s.subscribe(ctx, req, vis) }
		o.UnsubscribeHandler = s.unsubscribe
	}
	if s.comp != nil {
		o.CompletionHandler = func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return s.complete(ctx, req, vis)
		}
	}
}

// Attach lists the current prompts, resources and templates that vis
// shows on srv (made with Configure's options, with Middleware, for the
// same vis) and keeps them in step until Detach.
func (s *Surface) Attach(srv *mcp.Server, vis Visibility) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mirrors[srv] != nil {
		return
	}
	m := &mirror{srv: srv, vis: vis, prompts: map[string]*promptEntry{}, resources: map[string]*resourceEntry{}, templates: map[string]*templateEntry{}}
	m.sync(s.st.Load())
	s.mirrors[srv] = m
}

// Detach stops keeping srv in step.
func (s *Surface) Detach(srv *mcp.Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mirrors, srv)
}

// mirror is what one attached server has registered.
type mirror struct {
	srv       *mcp.Server
	vis       Visibility
	prompts   map[string]*promptEntry
	resources map[string]*resourceEntry
	templates map[string]*templateEntry
}

// sync registers and removes so that m's server lists what st has and
// m.vis shows; the go-sdk
// announces list_changed for what changed. The registered handlers are
// reached only if Middleware is missing: it answers gets and reads
// itself.
func (m *mirror) sync(st *state) {
	syncItems(m.prompts, st.prompts, func(e *promptEntry) bool { return visible(m.vis, e.domain, e.origin) },
		m.srv.RemovePrompts, func(e *promptEntry) { m.srv.AddPrompt(e.listed, unreachablePrompt) })
	syncItems(m.resources, st.resources, func(e *resourceEntry) bool { return visible(m.vis, e.domain, e.up.Name) },
		m.srv.RemoveResources, func(e *resourceEntry) { m.srv.AddResource(e.listed, unreachableResource) })
	syncItems(m.templates, st.templates, func(e *templateEntry) bool { return visible(m.vis, e.domain, e.up.Name) },
		m.srv.RemoveResourceTemplates, func(e *templateEntry) { m.srv.AddResourceTemplate(e.listed, unreachableResource) })
}

// syncItems makes have (what a server has registered, by key) what want
// holds and show allows: what changed or is no longer shown is removed
// (in one call), then what is new or changed is added.
func syncItems[E comparable](have, want map[string]E, show func(E) bool, remove func(...string), add func(E)) {
	var gone []string
	for key, e := range have {
		if want[key] != e || !show(e) {
			gone = append(gone, key)
			delete(have, key)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
	for key, e := range want {
		if have[key] != e && show(e) {
			add(e)
			have[key] = e
		}
	}
}

func unreachablePrompt(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return nil, internalError("prompts/get reached the go-sdk: the server lacks the surface middleware")
}

func unreachableResource(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return nil, internalError("resources/read reached the go-sdk: the server lacks the surface middleware")
}
