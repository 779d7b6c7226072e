package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/redact"
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

// upstreamSurface is an upstream's Surface and subscriptions.
type upstreamSurface struct {
	domain string
	env    *shared
	// changed receives after the server announced a list change
	// (coalescing); follow re-lists.
	changed chan struct{}

	mu                                         sync.Mutex // guards the rest
	changedBy                                  *mcp.ClientSession
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

// snapshot returns the surface as it was last listed.
func (s *upstreamSurface) snapshot() Surface {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Surface{Domain: s.domain, Listed: s.listed, Prompts: s.prompts, Resources: s.resources, Subscribe: s.subscribe, Completions: s.completions,
		PromptList: s.promptList, ResourceList: s.resourceList, TemplateList: s.templateList, Cut: s.cut}
}

// handlers sets the client options that follow the surface.
func (s *upstreamSurface) handlers(o *mcp.ClientOptions) {
	changed := func(ss *mcp.ClientSession) {
		s.mu.Lock()
		s.changedBy = ss
		s.mu.Unlock()
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
	o.PromptListChangedHandler = func(_ context.Context, req *mcp.PromptListChangedRequest) { changed(req.Session) }
	o.ResourceListChangedHandler = func(_ context.Context, req *mcp.ResourceListChangedRequest) { changed(req.Session) }
	o.ResourceUpdatedHandler = func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		if req.Params == nil {
			return
		}
		s.mu.Lock()
		subscribed := s.subs[req.Params.URI]
		s.mu.Unlock()
		if subscribed { // an update of nothing asked for is dropped: the set is bounded
			s.env.surfaceChanged(s.domain, req.Params.URI)
		}
	}
}

// list lists session's prompts, resources and templates (those its
// capabilities declare), subscribes again to the resources subscribed
// to before (after a restart), and tells the watchers when the lists
// changed. A list that fails keeps what was listed before and is
// logged: the server's tools still serve.
func (s *upstreamSurface) list(ctx context.Context, session *mcp.ClientSession) {
	log, secrets := s.env.log, s.env.opts.Redactor
	caps := &mcp.ServerCapabilities{}
	if ir := session.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	s.mu.Lock()
	next := Surface{PromptList: s.promptList, ResourceList: s.resourceList, TemplateList: s.templateList}
	s.mu.Unlock()
	next.Listed = true
	next.Prompts, next.Resources = caps.Prompts != nil, caps.Resources != nil
	next.Subscribe = caps.Resources != nil && caps.Resources.Subscribe
	next.Completions = caps.Completions != nil
	note := func(kind string, cut string, err error) {
		if err != nil {
			log.Warn("listing upstream "+kind+" failed; keeping the last list", "domain", s.domain, "err", secrets.Error(err))
		}
		if cut != "" {
			next.Cut = append(next.Cut, kind+": "+cut)
			log.Warn("upstream lists too many "+kind+"; the rest is left out", "domain", s.domain, "why", cut)
		}
	}
	if next.Prompts {
		l, cut, err := listPages(ctx, func(c string) ([]*mcp.Prompt, string, error) {
			r, err := session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: c})
			if err != nil {
				return nil, "", err
			}
			return r.Prompts, r.NextCursor, nil
		})
		if note("prompts", cut, err); err == nil {
			next.PromptList = scrubList(secrets, l)
		}
	} else {
		next.PromptList = nil
	}
	if next.Resources {
		l, cut, err := listPages(ctx, func(c string) ([]*mcp.Resource, string, error) {
			r, err := session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: c})
			if err != nil {
				return nil, "", err
			}
			return r.Resources, r.NextCursor, nil
		})
		if note("resources", cut, err); err == nil {
			next.ResourceList = scrubList(secrets, l)
		}
		t, cut, err := listPages(ctx, func(c string) ([]*mcp.ResourceTemplate, string, error) {
			r, err := session.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: c})
			if err != nil {
				return nil, "", err
			}
			return r.ResourceTemplates, r.NextCursor, nil
		})
		if note("resource templates", cut, err); err == nil {
			next.TemplateList = scrubList(secrets, t)
		}
	} else {
		next.ResourceList, next.TemplateList = nil, nil
	}
	s.mu.Lock()
	same := s.listed && s.prompts == next.Prompts && s.resources == next.Resources && s.subscribe == next.Subscribe && s.completions == next.Completions &&
		reflect.DeepEqual(s.promptList, next.PromptList) && reflect.DeepEqual(s.resourceList, next.ResourceList) &&
		reflect.DeepEqual(s.templateList, next.TemplateList)
	s.listed, s.prompts, s.resources, s.subscribe, s.completions = true, next.Prompts, next.Resources, next.Subscribe, next.Completions
	s.promptList, s.resourceList, s.templateList, s.cut = next.PromptList, next.ResourceList, next.TemplateList, next.Cut
	var resub []string
	if s.subsOn != session { // a new session: the server forgot them
		for uri := range s.subs {
			resub = append(resub, uri)
		}
		s.subsOn = session
	}
	s.mu.Unlock()
	for _, uri := range resub {
		// Idempotent on a server that still has it; needed after a
		// restart, which forgets it.
		if err := session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			log.Warn("subscribing again to an upstream resource failed", "domain", s.domain, "uri", uri, "err", err)
		}
	}
	if !same {
		s.env.surfaceChanged(s.domain, "")
	}
}

// follow re-lists the surface after the server announces a change, at
// most once per relistEvery, as upstream.follow does for tools; each
// listing gets timeout.
func (s *upstreamSurface) follow(ctx context.Context, timeout time.Duration) {
	take := func() *mcp.ClientSession {
		s.mu.Lock()
		defer s.mu.Unlock()
		ss := s.changedBy
		s.changedBy = nil
		return ss
	}
	throttled(ctx, s.changed, take, func(session *mcp.ClientSession) {
		lctx, cancel := context.WithTimeout(ctx, timeout)
		s.list(lctx, session)
		cancel()
	})
}

// subscription records that uri is subscribed to (on) or no longer is;
// it reports whether it was.
func (s *upstreamSurface) subscription(uri string, on bool) (was bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	was = s.subs[uri]
	if on {
		if s.subs == nil {
			s.subs = map[string]bool{}
		}
		s.subs[uri] = true
	} else {
		delete(s.subs, uri)
	}
	return was
}

// Surfaces are the upstreams' prompts, resources and templates
// (Gateway.Surfaces): listed, got, read, completed and subscribed to on
// their upstream; and the functions WatchSurface registered.
type Surfaces struct {
	f       *Upstreams
	secrets *redact.Redactor
	mu      sync.Mutex
	fs      []func(domain, uri string)
}

// WatchSurface registers f, called after an upstream's prompts,
// resources or templates changed (uri "") and when an upstream says a
// resource subscribed to through SubscribeResource changed (uri is that
// resource's, as the upstream names it). f must not block for long.
func (s *Surfaces) WatchSurface(f func(domain, uri string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fs = append(s.fs, f)
}

func (s *Surfaces) tell(domain, uri string) {
	s.mu.Lock()
	fs := slices.Clone(s.fs)
	s.mu.Unlock()
	for _, f := range fs {
		f(domain, uri)
	}
}

// WaitReady waits until every upstream has finished its first
// connection attempt (successful or not) or ctx is done: the first lists
// wait for it.
func (s *Surfaces) WaitReady(ctx context.Context) { s.f.WaitReady(ctx) }

// List returns every upstream's surface, in the order of the config.
func (s *Surfaces) List() []Surface {
	out := make([]Surface, 0, len(s.f.ups))
	for _, u := range s.f.ups {
		out = append(out, u.surface.snapshot())
	}
	return out
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

// GetPrompt gets the prompt p names (the upstream's own name) from the
// upstream of domain.
func (s *Surfaces) GetPrompt(ctx context.Context, domain string, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	var res *mcp.GetPromptResult
	err := s.on(ctx, domain, "prompts/get", func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.GetPrompt(ctx, p)
		return err
	})
	if res != nil {
		res.Meta = nil // the upstream's serverInfo must not leak through
	}
	return scrubAnswer(s.secrets, res, err)
}

// ReadResource reads the resource p names (the upstream's own URI) from
// the upstream of domain.
func (s *Surfaces) ReadResource(ctx context.Context, domain string, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	var res *mcp.ReadResourceResult
	err := s.on(ctx, domain, "resources/read", func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.ReadResource(ctx, p)
		return err
	})
	if res != nil {
		res.Meta = nil
	}
	return scrubAnswer(s.secrets, res, err)
}

// Complete asks the upstream of domain to complete an argument of its
// prompt or resource template (p's reference is the upstream's own).
func (s *Surfaces) Complete(ctx context.Context, domain string, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	var res *mcp.CompleteResult
	err := s.on(ctx, domain, "completion/complete", func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.Complete(ctx, p)
		return err
	})
	if res != nil {
		res.Meta = nil
	}
	return scrubAnswer(s.secrets, res, err)
}

// ErrNoSubscriptions is wrapped by SubscribeResource's error for a server
// that does not declare resource subscriptions.
var ErrNoSubscriptions = errors.New("the server does not support resource subscriptions")

// SubscribeResource subscribes to the resource uri (the upstream's own)
// on the upstream of domain, and again after each restart of it, until
// UnsubscribeResource. Its updates go to the WatchSurface functions.
func (s *Surfaces) SubscribeResource(ctx context.Context, domain, uri string) error {
	u, err := s.f.get(domain)
	if err != nil {
		return err
	}
	us := &u.surface
	us.mu.Lock()
	listed, can, already := us.listed, us.subscribe, us.subs[uri]
	us.mu.Unlock()
	if already {
		return nil
	}
	if listed && !can {
		return fmt.Errorf("server %q: %w", domain, ErrNoSubscriptions)
	}
	err = u.do(ctx, "resources/subscribe", func(ctx context.Context, cs *mcp.ClientSession) error {
		return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	if err != nil {
		return err
	}
	us.subscription(uri, true)
	return nil
}

// UnsubscribeResource ends SubscribeResource's subscription. A server
// that is down forgets it anyway.
func (s *Surfaces) UnsubscribeResource(ctx context.Context, domain, uri string) error {
	u, err := s.f.get(domain)
	if err != nil {
		return err
	}
	had := u.surface.subscription(uri, false)
	u.mu.Lock()
	session := u.session
	u.mu.Unlock()
	if !had || session == nil {
		return nil
	}
	return u.do(ctx, "resources/unsubscribe", func(ctx context.Context, cs *mcp.ClientSession) error {
		return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
}

// on runs f on domain's upstream (upstream.do: waiting for a server
// still starting, worded as Execute's errors are).
func (s *Surfaces) on(ctx context.Context, domain, what string, f func(context.Context, *mcp.ClientSession) error) error {
	u, err := s.f.get(domain)
	if err != nil {
		return err
	}
	return u.do(ctx, what, f)
}
