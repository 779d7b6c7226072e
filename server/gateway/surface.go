package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream's surface besides its tools: its prompts, resources and
// resource templates, listed when it connects (when its capabilities
// declare them) and again after it announces prompts/list_changed or
// resources/list_changed, at most once per relistEvery; and the
// resources toolscout subscribed to on it, subscribed again after a
// restart. What it says of a subscribed resource
// (notifications/resources/updated) goes to the watchers.
//
// An upstream that floods is bounded: each of its three lists keeps at
// most MaxSurfaceItems items and MaxSurfaceBytes of JSON, read from at
// most MaxSurfacePages pages; the rest is left out, with a warning.

// Bounds of one upstream's lists of prompts, resources and templates
// (each list on its own).
const (
	MaxSurfaceItems = 10000
	MaxSurfaceBytes = 8 << 20
	MaxSurfacePages = 1000
)

// Surface is what one upstream offers besides tools, as it last listed
// it. Its slices and their items are shared: read them, never modify
// them.
type Surface struct {
	Domain string
	// Listed is set once the server has connected and been asked for its
	// capabilities; before, nothing is known of it.
	Listed bool
	// Prompts, Resources, Subscribe and Completions are the
	// capabilities it declared.
	Prompts, Resources, Subscribe, Completions bool
	PromptList                                 []*mcp.Prompt
	ResourceList                               []*mcp.Resource
	TemplateList                               []*mcp.ResourceTemplate
	// Cut says what the bounds left out, one line each.
	Cut []string
}

// upstreamSurface is an upstream's Surface and subscriptions. Its
// fields but changed are guarded by upstream.mu.
type upstreamSurface struct {
	// changed receives after the server announced a list change
	// (coalescing); followSurface re-lists.
	changed   chan struct{}
	changedBy *mcp.ClientSession

	listed                                     bool
	prompts, resources, subscribe, completions bool
	promptList                                 []*mcp.Prompt
	resourceList                               []*mcp.Resource
	templateList                               []*mcp.ResourceTemplate
	cut                                        []string
	// subs are the URIs subscribed to on the server (SubscribeResource),
	// subsOn the session they were last subscribed on.
	subs   map[string]bool
	subsOn *mcp.ClientSession
}

// surfaceWatch holds the functions WatchSurface registered.
type surfaceWatch struct {
	mu sync.Mutex
	fs []func(domain, uri string)
}

// WatchSurface registers f, called after an upstream's prompts,
// resources or templates changed (uri "") and when an upstream says a
// resource subscribed to through SubscribeResource changed (uri is that
// resource's, as the upstream names it). f must not block for long.
func (g *Gateway) WatchSurface(f func(domain, uri string)) {
	g.surf.mu.Lock()
	defer g.surf.mu.Unlock()
	g.surf.fs = append(g.surf.fs, f)
}

func (g *Gateway) tellSurface(domain, uri string) {
	g.surf.mu.Lock()
	fs := slices.Clone(g.surf.fs)
	g.surf.mu.Unlock()
	for _, f := range fs {
		f(domain, uri)
	}
}

// Surfaces returns every upstream's surface, in the order of the config.
func (g *Gateway) Surfaces() []Surface {
	out := make([]Surface, 0, len(g.ups))
	for _, u := range g.ups {
		u.mu.Lock()
		s := &u.surface
		out = append(out, Surface{Domain: u.cfg.Domain, Listed: s.listed, Prompts: s.prompts, Resources: s.resources, Subscribe: s.subscribe, Completions: s.completions,
			PromptList: s.promptList, ResourceList: s.resourceList, TemplateList: s.templateList, Cut: s.cut})
		u.mu.Unlock()
	}
	return out
}

// surfaceHandlers sets the client options that follow u's surface.
func (g *Gateway) surfaceHandlers(u *upstream, o *mcp.ClientOptions) {
	changed := func(ss *mcp.ClientSession) {
		u.mu.Lock()
		u.surface.changedBy = ss
		u.mu.Unlock()
		select {
		case u.surface.changed <- struct{}{}:
		default:
		}
	}
	o.PromptListChangedHandler = func(_ context.Context, req *mcp.PromptListChangedRequest) { changed(req.Session) }
	o.ResourceListChangedHandler = func(_ context.Context, req *mcp.ResourceListChangedRequest) { changed(req.Session) }
	o.ResourceUpdatedHandler = func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		if req.Params == nil {
			return
		}
		u.mu.Lock()
		subscribed := u.surface.subs[req.Params.URI]
		u.mu.Unlock()
		if subscribed { // an update of nothing asked for is dropped: the set is bounded
			g.tellSurface(u.cfg.Domain, req.Params.URI)
		}
	}
}

// listSurface lists session's prompts, resources and templates into u
// (those its capabilities declare), subscribes again to the resources
// subscribed to before (after a restart), and tells the watchers when
// the lists changed. A list that fails keeps what u had and is logged:
// the server's tools still serve.
func (g *Gateway) listSurface(ctx context.Context, u *upstream, session *mcp.ClientSession) {
	caps := &mcp.ServerCapabilities{}
	if ir := session.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	u.mu.Lock()
	next := upstreamSurface{promptList: u.surface.promptList, resourceList: u.surface.resourceList, templateList: u.surface.templateList}
	u.mu.Unlock()
	next.listed = true
	next.prompts, next.resources = caps.Prompts != nil, caps.Resources != nil
	next.subscribe = caps.Resources != nil && caps.Resources.Subscribe
	next.completions = caps.Completions != nil
	next.cut = nil
	note := func(kind string, cut string, err error) {
		if err != nil {
			g.log.Warn("listing upstream "+kind+" failed; keeping the last list", "domain", u.cfg.Domain, "err", g.opts.Redactor.Error(err))
		}
		if cut != "" {
			next.cut = append(next.cut, kind+": "+cut)
			g.log.Warn("upstream lists too many "+kind+"; the rest is left out", "domain", u.cfg.Domain, "why", cut)
		}
	}
	if next.prompts {
		l, cut, err := listPages(ctx, func(c string) ([]*mcp.Prompt, string, error) {
			r, err := session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: c})
			if err != nil {
				return nil, "", err
			}
			return r.Prompts, r.NextCursor, nil
		})
		if note("prompts", cut, err); err == nil {
			next.promptList = scrubList(g.opts.Redactor, l)
		}
	} else {
		next.promptList = nil
	}
	if next.resources {
		l, cut, err := listPages(ctx, func(c string) ([]*mcp.Resource, string, error) {
			r, err := session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: c})
			if err != nil {
				return nil, "", err
			}
			return r.Resources, r.NextCursor, nil
		})
		if note("resources", cut, err); err == nil {
			next.resourceList = scrubList(g.opts.Redactor, l)
		}
		t, cut, err := listPages(ctx, func(c string) ([]*mcp.ResourceTemplate, string, error) {
			r, err := session.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: c})
			if err != nil {
				return nil, "", err
			}
			return r.ResourceTemplates, r.NextCursor, nil
		})
		if note("resource templates", cut, err); err == nil {
			next.templateList = scrubList(g.opts.Redactor, t)
		}
	} else {
		next.resourceList, next.templateList = nil, nil
	}
	u.mu.Lock()
	cur := &u.surface
	same := cur.listed && cur.prompts == next.prompts && cur.resources == next.resources && cur.subscribe == next.subscribe && cur.completions == next.completions &&
		reflect.DeepEqual(cur.promptList, next.promptList) && reflect.DeepEqual(cur.resourceList, next.resourceList) &&
		reflect.DeepEqual(cur.templateList, next.templateList)
	cur.listed, cur.prompts, cur.resources, cur.subscribe, cur.completions = true, next.prompts, next.resources, next.subscribe, next.completions
	cur.promptList, cur.resourceList, cur.templateList, cur.cut = next.promptList, next.resourceList, next.templateList, next.cut
	var resub []string
	if cur.subsOn != session { // a new session: the server forgot them
		for uri := range cur.subs {
			resub = append(resub, uri)
		}
		cur.subsOn = session
	}
	u.mu.Unlock()
	for _, uri := range resub {
		// Idempotent on a server that still has it; needed after a
		// restart, which forgets it.
		if err := session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			g.log.Warn("subscribing again to an upstream resource failed", "domain", u.cfg.Domain, "uri", uri, "err", err)
		}
	}
	if !same {
		g.tellSurface(u.cfg.Domain, "")
	}
}

// listPages reads a list page by page within the bounds. cut says why
// it stopped early ("" when it read the whole list).
func listPages[T any](ctx context.Context, page func(cursor string) ([]T, string, error)) (items []T, cut string, err error) {
	cursor, size := "", 0
	for n := 0; ; n++ {
		if n == MaxSurfacePages {
			return items, fmt.Sprintf("more than %d pages", MaxSurfacePages), nil
		}
		got, next, err := page(cursor)
		if err != nil {
			return nil, "", err
		}
		for _, it := range got {
			if len(items) == MaxSurfaceItems {
				return items, fmt.Sprintf("more than %d items", MaxSurfaceItems), nil
			}
			b, _ := json.Marshal(it)
			if size += len(b); size > MaxSurfaceBytes {
				return items, fmt.Sprintf("more than %d bytes", MaxSurfaceBytes), nil
			}
			items = append(items, it)
		}
		if next == "" {
			return items, "", nil
		}
		if next == cursor {
			return items, "the server answered the same cursor again", nil
		}
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		cursor = next
	}
}

// followSurface re-lists u's surface after it announces a change, at
// most once per relistEvery, as follow does for tools.
func (g *Gateway) followSurface(ctx context.Context, u *upstream) {
	throttled(ctx, u, u.surface.changed, &u.surface.changedBy, func(session *mcp.ClientSession) {
		lctx, cancel := context.WithTimeout(ctx, u.cfg.connectTimeout())
		g.listSurface(lctx, u, session)
		cancel()
	})
}

// GetPrompt gets the prompt p names (the upstream's own name) from the
// upstream of domain.
func (g *Gateway) GetPrompt(ctx context.Context, domain string, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	var res *mcp.GetPromptResult
	err := g.onUpstream(ctx, domain, "prompts/get", func(ctx context.Context, s *mcp.ClientSession) (err error) {
		res, err = s.GetPrompt(ctx, p)
		return err
	})
	if res != nil {
		res.Meta = nil // the upstream's serverInfo must not leak through
	}
	return scrubAnswer(g.opts.Redactor, res, err)
}

// ReadResource reads the resource p names (the upstream's own URI) from
// the upstream of domain.
func (g *Gateway) ReadResource(ctx context.Context, domain string, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	var res *mcp.ReadResourceResult
	err := g.onUpstream(ctx, domain, "resources/read", func(ctx context.Context, s *mcp.ClientSession) (err error) {
		res, err = s.ReadResource(ctx, p)
		return err
	})
	if res != nil {
		res.Meta = nil
	}
	return scrubAnswer(g.opts.Redactor, res, err)
}

// Complete asks the upstream of domain to complete an argument of its
// prompt or resource template (p's reference is the upstream's own).
func (g *Gateway) Complete(ctx context.Context, domain string, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	var res *mcp.CompleteResult
	err := g.onUpstream(ctx, domain, "completion/complete", func(ctx context.Context, s *mcp.ClientSession) (err error) {
		res, err = s.Complete(ctx, p)
		return err
	})
	if res != nil {
		res.Meta = nil
	}
	return scrubAnswer(g.opts.Redactor, res, err)
}

// ErrNoSubscriptions is wrapped by SubscribeResource's error for a server
// that does not declare resource subscriptions.
var ErrNoSubscriptions = errors.New("the server does not support resource subscriptions")

// SubscribeResource subscribes to the resource uri (the upstream's own)
// on the upstream of domain, and again after each restart of it, until
// UnsubscribeResource. Its updates go to the WatchSurface functions.
func (g *Gateway) SubscribeResource(ctx context.Context, domain, uri string) error {
	u := g.byDom[domain]
	if u == nil {
		return fmt.Errorf("no server %q", domain)
	}
	u.mu.Lock()
	listed, can, already := u.surface.listed, u.surface.subscribe, u.surface.subs[uri]
	u.mu.Unlock()
	if already {
		return nil
	}
	if listed && !can {
		return fmt.Errorf("server %q: %w", domain, ErrNoSubscriptions)
	}
	err := g.onUpstream(ctx, domain, "resources/subscribe", func(ctx context.Context, s *mcp.ClientSession) error {
		return s.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	if err != nil {
		return err
	}
	u.mu.Lock()
	if u.surface.subs == nil {
		u.surface.subs = map[string]bool{}
	}
	u.surface.subs[uri] = true
	u.mu.Unlock()
	return nil
}

// UnsubscribeResource ends SubscribeResource's subscription. A server
// that is down forgets it anyway.
func (g *Gateway) UnsubscribeResource(ctx context.Context, domain, uri string) error {
	u := g.byDom[domain]
	if u == nil {
		return fmt.Errorf("no server %q", domain)
	}
	u.mu.Lock()
	had := u.surface.subs[uri]
	delete(u.surface.subs, uri)
	session := u.session
	u.mu.Unlock()
	if !had || session == nil {
		return nil
	}
	return g.onUpstream(ctx, domain, "resources/unsubscribe", func(ctx context.Context, s *mcp.ClientSession) error {
		return s.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
}

// onUpstream runs f on domain's session within the server's timeout,
// waiting for a server that is still starting, and words the errors as
// Execute does (matching ErrUnavailable, ErrTimeout, ErrStopped,
// ErrClosing). An error the server answered (a *jsonrpc.Error) is
// wrapped, so that errors.As finds it.
func (g *Gateway) onUpstream(ctx context.Context, domain, what string, f func(context.Context, *mcp.ClientSession) error) error {
	u := g.byDom[domain]
	if u == nil {
		return fmt.Errorf("no server %q", domain)
	}
	u.mu.Lock()
	session, state, uerr := u.session, u.state, u.err
	u.mu.Unlock()
	if session == nil && state == "connecting" {
		wctx, cancel := context.WithTimeout(ctx, u.cfg.timeout())
		select {
		case <-u.ready:
		case <-wctx.Done():
		}
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		u.mu.Lock()
		session, state, uerr = u.session, u.state, u.err
		u.mu.Unlock()
	}
	if session == nil {
		reason := state
		if uerr != nil {
			reason = uerr.Error()
		}
		return classed(ErrUnavailable, fmt.Errorf("server %q is unavailable (%s); toolscout keeps reconnecting it", domain, reason))
	}
	cctx, cancel := context.WithTimeout(ctx, u.cfg.timeout())
	defer cancel()
	go func() {
		select {
		case <-g.closing:
			cancel()
		case <-cctx.Done():
		}
	}()
	callCtx := cctx
	if ss := clientOf(ctx); ss != nil {
		// Asked for a client (WithClient): routed as a tool call is
		// (calls.go).
		route, end := g.openRoute(ctx, u, ss, nil)
		defer end()
		callCtx = withRoute(cctx, route)
		defer route.drain()
	}
	err := g.opts.Redactor.Error(f(callCtx, session))
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	select {
	case <-g.closing:
		return classed(ErrClosing, fmt.Errorf("toolscout is shutting down: %s on server %q was cancelled; retry it", what, domain))
	default:
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return classed(ErrTimeout, fmt.Errorf("server %q did not answer %s within %s (its timeout)", domain, what, u.cfg.timeout()))
	}
	if connectionLost(err) {
		return classed(ErrStopped, fmt.Errorf("server %q stopped during %s (%v); toolscout is restarting it", domain, what, err))
	}
	return fmt.Errorf("server %q: %w", domain, err)
}
