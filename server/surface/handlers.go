package surface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The methods Middleware serves or adjusts.
const (
	methodInitialize    = "initialize"
	methodDiscover      = "server/discover"
	methodListPrompts   = "prompts/list"
	methodGetPrompt     = "prompts/get"
	methodListResources = "resources/list"
	methodListTemplates = "resources/templates/list"
	methodReadResource  = "resources/read"
)

// codeResourceNotFound is the code earlier protocol versions gave a
// resource that does not exist; the 2026-07-28 draft says -32602 and
// asks clients to accept both. An upstream's is answered as -32602.
const codeResourceNotFound = -32002

// Middleware is the receiving middleware of an attached server: it
// answers prompts/get and resources/read on the upstream, holds the
// first lists until the upstreams have connected (within StartupWait),
// leaves out of lists what Visible hides, sets the lists' and reads'
// caching hints, and makes the capabilities of initialize and
// server/discover say what the upstreams have (advertise).
func (s *Surface) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case methodGetPrompt:
			r, ok := req.(*mcp.GetPromptRequest)
			if !ok || r.Params == nil {
				break
			}
			return s.getPrompt(ctx, r)
		case methodReadResource:
			r, ok := req.(*mcp.ReadResourceRequest)
			if !ok || r.Params == nil {
				break
			}
			return s.read(ctx, r)
		case methodListPrompts, methodListResources, methodListTemplates:
			s.waitReady(ctx)
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		st := s.st.Load()
		switch r := res.(type) {
		case *mcp.InitializeResult:
			if r != nil {
				s.adjust(st, r.Capabilities)
			}
		case *mcp.DiscoverResult:
			if r != nil {
				s.adjust(st, r.Capabilities)
			}
		case *mcp.ListPromptsResult:
			if r != nil {
				r.Prompts = filter(r.Prompts, func(p *mcp.Prompt) bool { return s.visible(ctx, req, st.promptDomain(p.Name)) })
				s.cacheList(&r.Cacheable)
			}
		case *mcp.ListResourcesResult:
			if r != nil {
				r.Resources = filter(r.Resources, func(x *mcp.Resource) bool { return s.visible(ctx, req, uriDomain(x.URI)) })
				s.cacheList(&r.Cacheable)
			}
		case *mcp.ListResourceTemplatesResult:
			if r != nil {
				r.ResourceTemplates = filter(r.ResourceTemplates, func(x *mcp.ResourceTemplate) bool { return s.visible(ctx, req, uriDomain(x.URITemplate)) })
				s.cacheList(&r.Cacheable)
			}
		}
		return res, nil
	}
}

// adjust makes caps declare prompts and resources only as advertise
// says (the go-sdk's declare them always: see Configure).
func (s *Surface) adjust(st *state, caps *mcp.ServerCapabilities) {
	if caps == nil {
		return
	}
	if !st.prompts_ {
		caps.Prompts = nil
	}
	if !st.completions {
		caps.Completions = nil
	}
	if !st.resources_ {
		caps.Resources = nil
	} else if caps.Resources != nil && !st.subscribe {
		r := *caps.Resources
		r.Subscribe = false
		caps.Resources = &r
	}
}

// visible is the one check by caller (Options.Visible).
func (s *Surface) visible(ctx context.Context, req mcp.Request, domain string) bool {
	return s.opts.Visible == nil || s.opts.Visible(ctx, req, domain)
}

// cacheList sets a list's caching hints: the same for every caller
// unless Visible filters it.
func (s *Surface) cacheList(c *mcp.Cacheable) {
	c.TTLMs, c.CacheScope = int(s.opts.ListTTL.Milliseconds()), "public"
	if s.opts.Visible != nil {
		c.CacheScope = "private"
	}
}

// filter keeps the items keep accepts, in place.
func filter[T any](items []T, keep func(T) bool) []T {
	out := items[:0]
	for _, it := range items {
		if keep(it) {
			out = append(out, it)
		}
	}
	return out
}

// promptDomain returns the domain of a listed prompt name.
func (st *state) promptDomain(name string) string {
	if e := st.prompts[name]; e != nil {
		return e.domain
	}
	return ""
}

// uriDomain returns the domain of a listed URI or template.
func uriDomain(uri string) string {
	d, _, _ := UnwrapURI(uri)
	return d
}

// waitReady holds a list until the upstreams have finished connecting,
// within StartupWait: a client that lists prompts right after
// initialize gets them, not an empty list that fills in later.
func (s *Surface) waitReady(ctx context.Context) {
	if s.ready == nil || s.opts.StartupWait <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartupWait)
	defer cancel()
	s.ready.WaitReady(ctx)
}

// getPrompt answers prompts/get from the prompt's upstream.
func (s *Surface) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (mcp.Result, error) {
	name := req.Params.Name
	st := s.st.Load()
	e, candidates := st.resolvePrompt(name)
	if e == nil && len(candidates) == 0 && len(st.prompts) == 0 {
		s.waitReady(ctx) // an upstream still connecting may have it
		st = s.st.Load()
		e, candidates = st.resolvePrompt(name)
	}
	if e != nil && !s.visible(ctx, req, e.domain) {
		e, candidates = nil, nil
	}
	if e == nil {
		return nil, s.unknownPrompt(ctx, req, st, name, candidates)
	}
	p := *req.Params
	p.Name, p.Meta = e.origin, nil
	res, err := s.opts.Fetcher.GetPrompt(ctx, e.domain, &p)
	if err != nil {
		return nil, upstreamError(err, fmt.Sprintf("prompt %q", name), nil)
	}
	return res, nil
}

// unknownPrompt is the invalid-params error for a prompt name that
// names none, with the candidates or how to find the names.
func (s *Surface) unknownPrompt(ctx context.Context, req mcp.Request, st *state, name string, candidates []string) error {
	var visible []string
	for _, c := range candidates {
		if s.visible(ctx, req, st.promptDomain(c)) {
			visible = append(visible, c)
		}
	}
	msg := fmt.Sprintf("unknown prompt %s", quote(name))
	switch {
	case len(visible) == 1:
		msg += fmt.Sprintf(": did you mean %s?", visible[0])
	case len(visible) > 1:
		msg += fmt.Sprintf(": several servers have it; name one of %s", strings.Join(visible, ", "))
	default:
		msg += "; prompts/list lists the prompts, each as domain__name"
	}
	return invalidParams(msg, map[string]any{"name": name})
}

// read answers resources/read from the resource's upstream, the
// contents' URIs in the form the client asked for.
func (s *Surface) read(ctx context.Context, req *mcp.ReadResourceRequest) (mcp.Result, error) {
	uri := req.Params.URI
	st := s.st.Load()
	domain, origin, candidates := st.resolveResource(uri)
	if domain == "" && len(candidates) == 0 && len(st.resources) == 0 && len(st.templates) == 0 {
		s.waitReady(ctx)
		st = s.st.Load()
		domain, origin, candidates = st.resolveResource(uri)
	}
	if domain != "" && !s.visible(ctx, req, domain) {
		domain, candidates = "", nil
	}
	if domain == "" {
		return nil, s.unknownResource(ctx, req, uri, candidates)
	}
	p := *req.Params
	p.URI, p.Meta = origin, nil
	res, err := s.opts.Fetcher.ReadResource(ctx, domain, &p)
	if err != nil {
		return nil, upstreamError(err, fmt.Sprintf("resource %s", quote(uri)), map[string]any{"uri": uri})
	}
	if res == nil {
		return nil, internalError(fmt.Sprintf("resource %s: server %q answered nothing", quote(uri), domain))
	}
	if _, _, wrapped := UnwrapURI(uri); wrapped {
		for _, c := range res.Contents {
			if c == nil {
				continue
			}
			if c.URI == "" {
				c.URI = uri
			} else {
				c.URI = WrapURI(domain, c.URI)
			}
		}
	}
	// What a read holds may be one user's and change at any time: no
	// shared cache, always stale, unless the upstream said otherwise.
	if res.CacheScope == "" {
		res.TTLMs, res.CacheScope = 0, "private"
	}
	return res, nil
}

// unknownResource is the invalid-params error for a URI that names no
// resource (MCP 2026-07-28: -32602, with the uri in data).
func (s *Surface) unknownResource(ctx context.Context, req mcp.Request, uri string, candidates []string) error {
	var visible []string
	for _, c := range candidates {
		if s.visible(ctx, req, uriDomain(c)) {
			visible = append(visible, c)
		}
	}
	msg := fmt.Sprintf("unknown resource %s", quote(uri))
	if len(visible) > 0 {
		msg += fmt.Sprintf(": several servers have it; read one of %s", strings.Join(visible, ", "))
	} else {
		msg += "; resources/list and resources/templates/list give the URIs, each as " + uriPrefix + "DOMAIN/<the server's URI>"
	}
	return invalidParams(msg, map[string]any{"uri": uri})
}

// upstreamError words an upstream's failure for the client: an error the
// upstream answered that the client can act on keeps its code (invalid
// params, method not found, a code of the server's own outside JSON-RPC's
// reserved range; a resource it does not have, -32002 in older
// protocols, becomes -32602), prefixed with what was asked; anything
// else (the server down, timed out, its connection refused: the go-sdk
// reports those with codes of its own) is an internal error saying so.
func upstreamError(err error, what string, data map[string]any) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		code := werr.Code
		if code == codeResourceNotFound {
			code = jsonrpc.CodeInvalidParams
		}
		if code == jsonrpc.CodeInvalidParams || code == jsonrpc.CodeMethodNotFound || code > -32000 || code < -32768 {
			out := &jsonrpc.Error{Code: code, Message: fmt.Sprintf("%s: %v", what, err), Data: werr.Data}
			if data != nil && code == jsonrpc.CodeInvalidParams {
				out.Data, _ = json.Marshal(data)
			}
			return out
		}
	}
	return internalError(fmt.Sprintf("%s: %v", what, err))
}

func invalidParams(msg string, data map[string]any) error {
	b, _ := json.Marshal(data)
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg, Data: b}
}

func internalError(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}

// quote quotes a client's text for a message, shortened.
func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Sprintf("%q", s)
}
