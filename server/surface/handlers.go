package surface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/gateway"
)

// The methods Middleware serves or waits on.
const (
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

// Middleware returns the receiving middleware of a server attached for
// the caller vis describes: it answers prompts/get and resources/read on
// the upstream (what vis hides as unknown), holds the first lists until
// the upstreams have connected (within StartupWait), sets the lists' and
// reads' caching hints (lists private when vis is set: they vary by
// caller), and makes the capabilities of initialize and server/discover
// say what the upstreams have (advertise).
func (s *Surface) Middleware(vis Visibility) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return s.middleware(next, vis)
	}
}

func (s *Surface) middleware(next mcp.MethodHandler, vis Visibility) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if err := s.undeclared(ctx, method); err != nil {
			return nil, err
		}
		switch method {
		case methodGetPrompt:
			r, ok := req.(*mcp.GetPromptRequest)
			if !ok || r.Params == nil {
				break
			}
			return s.getPrompt(ctx, r, vis)
		case methodReadResource:
			r, ok := req.(*mcp.ReadResourceRequest)
			if !ok || r.Params == nil {
				break
			}
			return s.read(ctx, r, vis)
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
				s.cacheList(&r.Cacheable, vis)
			}
		case *mcp.ListResourcesResult:
			if r != nil {
				s.cacheList(&r.Cacheable, vis)
			}
		case *mcp.ListResourceTemplatesResult:
			if r != nil {
				s.cacheList(&r.Cacheable, vis)
			}
		}
		return res, nil
	}
}

// undeclared is the answer to a method of a capability that initialize
// and server/discover do not declare (adjust): when no upstream has
// prompts, prompts/list and prompts/get are answered -32601 Method not
// found, as a server without the capability answers them, and so are
// the resources methods without resources and completion/complete
// without completions. The go-sdk would answer them (empty lists) whatever
// is declared, and a client must find what is declared and what is
// answered agree (the 2026-07-28 specification: a server that answers
// prompts/list declares prompts). Declaring them instead would tell
// every client of a gateway whose servers have none that it has prompts
// and resources to show. nil when the method is declared (or none of
// these). A list waits for the upstreams' first lists first
// (waitReady), as its answer does.
func (s *Surface) undeclared(ctx context.Context, method string) error {
	var declared func(*state) bool
	switch method {
	case methodListPrompts, methodGetPrompt:
		declared = func(st *state) bool { return st.prompts_ }
	case methodListResources, methodListTemplates, methodReadResource, "resources/subscribe", "resources/unsubscribe":
		declared = func(st *state) bool { return st.resources_ }
	case "completion/complete":
		declared = func(st *state) bool { return st.completions }
	default:
		return nil
	}
	if declared(s.st.Load()) {
		return nil
	}
	s.waitReady(ctx)
	if declared(s.st.Load()) {
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("%s: method not found: no server behind toolscout declares %s (initialize and server/discover do not declare them either)", method, strings.SplitN(method, "/", 2)[0])}
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

// cacheList sets a list's caching hints: the same for every caller
// unless a caller's view lists it.
func (s *Surface) cacheList(c *mcp.Cacheable, vis Visibility) {
	c.TTLMs, c.CacheScope = int(s.opts.ListTTL.Milliseconds()), "public"
	if vis != nil {
		c.CacheScope = "private"
	}
}

// promptVisible reports whether vis shows the listed prompt name.
func (st *state) promptVisible(vis Visibility, name string) bool {
	e := st.prompts[name]
	return e != nil && visible(vis, e.domain, e.origin)
}

// resourceVisible reports whether vis shows the upstream URI origin of
// domain: by the name of the resource listed under it, else of the first
// of the domain's templates that matches it, else as a resource nothing
// lists ("").
func (st *state) resourceVisible(vis Visibility, domain, origin string) bool {
	if vis == nil {
		return true
	}
	return vis.Visible(domain, st.resourceName(domain, origin))
}

// resourceName returns the name visibility judges the upstream URI
// origin of domain by (resourceVisible).
func (st *state) resourceName(domain, origin string) string {
	if e := st.resources[WrapURI(domain, origin)]; e != nil {
		return e.up.Name
	}
	for _, e := range st.templates {
		if e.domain == domain && e.match.Regexp().MatchString(origin) {
			return e.up.Name
		}
	}
	return ""
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
func (s *Surface) getPrompt(ctx context.Context, req *mcp.GetPromptRequest, vis Visibility) (mcp.Result, error) {
	name := req.Params.Name
	st := s.st.Load()
	e, candidates := st.resolvePrompt(name)
	if e == nil && len(candidates) == 0 && len(st.prompts) == 0 {
		s.waitReady(ctx) // an upstream still connecting may have it
		st = s.st.Load()
		e, candidates = st.resolvePrompt(name)
	}
	if e != nil && !visible(vis, e.domain, e.origin) {
		e, candidates = nil, nil
	}
	if e == nil {
		return nil, unknownPrompt(vis, st, name, candidates)
	}
	p := *req.Params
	p.Name, p.Meta = e.origin, nil
	res, err := s.opts.Fetcher.GetPrompt(gateway.WithClient(ctx, req.Session), e.domain, &p)
	if err != nil {
		return nil, upstreamError(err, fmt.Sprintf("prompt %q", name), nil)
	}
	return res, nil
}

// unknownPrompt is the invalid-params error for a prompt name that
// names none, with the candidates or how to find the names.
func unknownPrompt(vis Visibility, st *state, name string, candidates []string) error {
	var shown []string
	for _, c := range candidates {
		if st.promptVisible(vis, c) {
			shown = append(shown, c)
		}
	}
	msg := fmt.Sprintf("unknown prompt %s", quote(name))
	switch {
	case len(shown) == 1:
		msg += fmt.Sprintf(": did you mean %s?", shown[0])
	case len(shown) > 1:
		msg += fmt.Sprintf(": several servers have it; name one of %s", strings.Join(shown, ", "))
	default:
		msg += "; prompts/list lists the prompts (each as domain__name, or under its own name with tool_names server)"
	}
	return invalidParams(msg, map[string]any{"name": name})
}

// read answers resources/read from the resource's upstream, the
// contents' URIs in the form the client asked for.
func (s *Surface) read(ctx context.Context, req *mcp.ReadResourceRequest, vis Visibility) (mcp.Result, error) {
	uri := req.Params.URI
	st := s.st.Load()
	domain, origin, candidates := st.resolveResource(uri)
	if domain == "" && len(candidates) == 0 && len(st.resources) == 0 && len(st.templates) == 0 {
		s.waitReady(ctx)
		st = s.st.Load()
		domain, origin, candidates = st.resolveResource(uri)
	}
	if domain != "" && !st.resourceVisible(vis, domain, origin) {
		domain, candidates = "", nil
	}
	if domain == "" {
		return nil, unknownResource(vis, st, uri, candidates)
	}
	p := *req.Params
	p.URI, p.Meta = origin, nil
	res, err := s.opts.Fetcher.ReadResource(gateway.WithClient(ctx, req.Session), domain, &p)
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
func unknownResource(vis Visibility, st *state, uri string, candidates []string) error {
	var shown []string
	for _, c := range candidates {
		if d, o, ok := UnwrapURI(c); ok && st.resourceVisible(vis, d, o) {
			shown = append(shown, c)
		}
	}
	msg := fmt.Sprintf("unknown resource %s", quote(uri))
	if len(shown) > 0 {
		msg += fmt.Sprintf(": several servers have it; read one of %s", strings.Join(shown, ", "))
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
