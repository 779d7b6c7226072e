package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/redact"
)

// What an upstream asks of its client in the middle of a call (sampling,
// elicitation, roots) and what it tells it (progress, log messages) goes
// to the client that made the call (issue 51). One upstream connection
// serves every client of toolscout, so each call a client makes through
// Execute is a callRoute while it runs, and each such message of the
// upstream's is matched to one:
//
//   - Over Streamable HTTP, the upstream sends the messages of a call on
//     the response stream of that call's POST; routeTagger (tagger.go)
//     marks each with the route of the POST it came on (routeMetaKey in
//     its params' _meta) before the go-sdk decodes it, and the handlers
//     here find the route by that mark (and remove it).
//   - Over stdio (and the old SSE transport) nothing on the wire says
//     which call a message belongs to. While every call in flight on the
//     server comes from one client, its messages go to that client; while
//     calls of several clients run on it, a request is refused with an
//     error that says why and a log message is dropped: never sent to a
//     client that may not be the one it was meant for.
//   - Progress has its own key: the token toolscout sends the upstream is
//     the route's id, turned back into the client's own token.
//
// A request goes to the client through the go-sdk's ServerSession with
// the context of the client's call, which relates it to that call (over
// HTTP it goes on the call's response stream) and carries the call's
// log level in the 2026-07-28 protocol. The go-sdk checks the client's
// capabilities (a client that did not declare elicitation is refused, as
// the upstream would refuse it); what the client answers, error or
// result, goes back to the upstream as it is.

// routeMetaKey is the _meta key routeTagger marks a message with.
const routeMetaKey = "io.github.toolscout/call"

// callRoute is one client's call running on an upstream.
type callRoute struct {
	id string // random: an upstream cannot guess another call's
	// key is the rest of the mark (routeMetaKey's value is id.key): the
	// server is sent the id (as the progress token), never the key, so
	// it cannot write a mark itself.
	key    string
	domain string
	// ctx is the context of the client's call (its handler's): the
	// go-sdk relates what is sent with it to that call. It is held only
	// while the call runs.
	ctx   context.Context
	ss    *mcp.ServerSession
	token any // the client's progress token, nil when it asked for none
	pend  pending
	// bridge, for a client that cannot be asked in the middle of a
	// call (bridge.go).
	bridge atomic.Pointer[bridge]
}

type routeKey struct{}

// withRoute returns ctx carrying r, for the HTTP transport (tagger.go).
func withRoute(ctx context.Context, r *callRoute) context.Context {
	return context.WithValue(ctx, routeKey{}, r)
}

func routeOf(ctx context.Context) *callRoute {
	r, _ := ctx.Value(routeKey{}).(*callRoute)
	return r
}

// newRouteID returns an unguessable route id.
func newRouteID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "toolscout-" + hex.EncodeToString(b[:])
}

// routes are the calls of clients running on a gateway's upstreams, by
// route id (the progress token an upstream is sent) and by domain; one
// table for every upstream, since a progress token names a call whatever
// connection it comes on.
type routes struct {
	mu       sync.Mutex
	byID     map[string]*callRoute
	inflight map[string]map[*callRoute]struct{} // by domain
	// secrets redacts what an upstream sends on to a client; maxMessage
	// bounds a request read on a call's stream (tagger.go).
	secrets    *redact.Redactor
	maxMessage int
}

func newRoutes(secrets *redact.Redactor, maxMessage int) *routes {
	return &routes{byID: map[string]*callRoute{}, inflight: map[string]map[*callRoute]struct{}{}, secrets: secrets, maxMessage: maxMessage}
}

// begin registers the call of req's client on domain's server; the
// returned func ends it. The call's result waits for the notifications
// read before it to be passed on (callRoute.drain) rather than the route
// outliving the call: its context holds what the call holds, a large
// result among it. It returns nil when the call has no client session
// (a call of toolscout's own).
func (rt *routes) begin(ctx context.Context, domain string, req *mcp.CallToolRequest) (*callRoute, func()) {
	if req == nil || req.Session == nil {
		return nil, func() {}
	}
	var token any
	if req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	return rt.open(ctx, domain, req.Session, token)
}

// open registers a call of ss's client on domain's server (see begin).
func (rt *routes) open(ctx context.Context, domain string, ss *mcp.ServerSession, token any) (*callRoute, func()) {
	r := &callRoute{id: newRouteID(), key: newRouteID(), domain: domain, ctx: ctx, ss: ss, token: token}
	rt.mu.Lock()
	rt.byID[r.id] = r
	if rt.inflight[domain] == nil {
		rt.inflight[domain] = map[*callRoute]struct{}{}
	}
	rt.inflight[domain][r] = struct{}{}
	rt.mu.Unlock()
	return r, func() {
		rt.mu.Lock()
		delete(rt.inflight[domain], r)
		delete(rt.byID, r.id)
		rt.mu.Unlock()
	}
}

type clientKey struct{}

// WithClient returns ctx saying that what is asked of an upstream with
// it (GetPrompt, ReadResource) is asked for ss's client: what the
// upstream asks of its client meanwhile (sampling, elicitation, roots)
// and its log messages go to that client, as during a tool call.
func WithClient(ctx context.Context, ss *mcp.ServerSession) context.Context {
	if ss == nil {
		return ctx
	}
	return context.WithValue(ctx, clientKey{}, ss)
}

func clientOf(ctx context.Context) *mcp.ServerSession {
	ss, _ := ctx.Value(clientKey{}).(*mcp.ServerSession)
	return ss
}

// routeFor returns the call a message of c's server belongs to, by the mark
// routeTagger or lineConn left in its meta (see above), which it removes;
// over the old SSE transport, which marks nothing, the call of the one
// client whose calls run on u. why says why there is none.
func (rt *routes) routeFor(c *UpstreamConfig, meta mcp.Meta) (r *callRoute, marked bool, why string) {
	mark, marked := meta[routeMetaKey].(string)
	delete(meta, routeMetaKey)
	if id, key, ok := strings.Cut(mark, "."); marked && ok {
		rt.mu.Lock()
		r := rt.byID[id]
		rt.mu.Unlock()
		if r != nil && r.key == key && r.domain == c.Domain {
			return r, true, ""
		}
	}
	if c.Command == "" && c.Transport != "sse" {
		// Streamable HTTP: a message of a call comes on its stream,
		// marked; one that is not came outside any call.
		return nil, false, "it came outside any call of a client"
	}
	r, why = rt.soleRoute(c.Domain)
	if c.Command != "" && r != nil {
		// stdio marks what it can as it reads: an unmarked message came
		// when no single client's calls were running.
		return nil, false, "it came while no call of a client was running on it"
	}
	return r, false, why
}

// soleRoute returns a call running on domain's server when every call
// running on it is one client's (the same session), or why not.
func (rt *routes) soleRoute(domain string) (r *callRoute, why string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for c := range rt.inflight[domain] {
		if r == nil {
			r = c
		} else if r.ss != c.ss {
			return nil, "calls of several clients are running on its one connection and nothing in the request says which it belongs to"
		}
	}
	if r == nil {
		return nil, "no call of a client is running on it"
	}
	return r, ""
}

// errNoRoute is the error an upstream's request gets when toolscout
// cannot tell which client it is for.
func errNoRoute(domain, method, why string) error {
	return fmt.Errorf("toolscout cannot pass %s from server %q to a client: %s", method, domain, why)
}

// clientRequests sets the handlers that pass c's server's requests and
// notifications to the client of the call they belong to. The
// capabilities toolscout declares to the upstream are the union of what
// clients may have (sampling with tools and context, elicitation in both
// modes, roots): the upstream offers what needs them, and each request is
// answered by the client of its call, or refused for it as the upstream
// would be refused by that client directly.
func (rt *routes) clientRequests(c *UpstreamConfig, o *mcp.ClientOptions) {
	o.Capabilities = &mcp.ClientCapabilities{
		RootsV2:     &mcp.RootCapabilities{},
		Sampling:    &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}, Context: &mcp.SamplingContextCapabilities{}},
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
	}
	// An input-required result (2026-07-28) goes back to the client,
	// which answers its input requests itself and retries: toolscout
	// never answers them.
	o.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	o.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		r, _, why := rt.routeFor(c, metaOf(req.Params))
		if r == nil {
			return nil, errNoRoute(c.Domain, "sampling/createMessage", why)
		}
		p := scrubParams(rt.secrets, req.Params)
		if b := r.bridgeOf(); b != nil {
			resp, err := b.ask(ctx, "sampling/createMessage", p)
			if err != nil {
				return nil, err
			}
			res, ok := resp.(*mcp.CreateMessageWithToolsResult)
			if !ok {
				return nil, fmt.Errorf("the client answered sampling/createMessage with %T", resp)
			}
			return res, nil
		}
		if err := unbridged(r, "sampling/createMessage"); err != nil {
			return nil, err
		}
		return r.ss.CreateMessageWithTools(r.ctx, p)
	}
	// Declares elicitation; the requests themselves are passed on by
	// middleware, before the go-sdk client's own checks (elicit).
	o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return rt.elicit(ctx, c, req)
	}
	o.LoggingMessageHandler = func(_ context.Context, req *mcp.LoggingMessageRequest) {
		if req.Params == nil {
			return
		}
		r, marked, _ := rt.routeFor(c, req.Params.Meta)
		if r == nil {
			return // not of a call: no client asked for it
		}
		if marked {
			defer r.done()
		}
		p := *req.Params
		p.Meta = nil
		// The logger names the server the message comes from.
		if p.Logger == "" {
			p.Logger = c.Domain
		} else {
			p.Logger = c.Domain + "/" + p.Logger
		}
		p.Logger = rt.secrets.String(p.Logger)
		p.Data = rt.secrets.Any(p.Data)
		// ServerSession.Log sends only what the client's logging/setLevel
		// (or its call's log level, in 2026-07-28) lets through.
		_ = r.ss.Log(context.WithoutCancel(r.ctx), &p)
	}
}

// elicit passes an upstream's elicitation/create to the client of the
// call it belongs to.
func (rt *routes) elicit(ctx context.Context, c *UpstreamConfig, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	r, _, why := rt.routeFor(c, metaOf(req.Params))
	if r == nil {
		return nil, errNoRoute(c.Domain, "elicitation/create", why)
	}
	p := scrubParams(rt.secrets, req.Params)
	if b := r.bridgeOf(); b != nil {
		resp, err := b.ask(ctx, "elicitation/create", p)
		if err != nil {
			return nil, err
		}
		res, ok := resp.(*mcp.ElicitResult)
		if !ok {
			return nil, fmt.Errorf("the client answered elicitation/create with %T", resp)
		}
		return res, nil
	}
	if err := unbridged(r, "elicitation/create"); err != nil {
		return nil, err
	}
	return r.ss.Elicit(r.ctx, p)
}

// middleware passes roots/list to the client of the call it belongs
// to: the go-sdk client answers it from its own list otherwise. It
// passes elicitation/create on too, before the go-sdk client checks its
// requested schema and the answer against it (Client.elicit): the
// client of the call is the one to judge them, and the go-sdk's check
// is stricter than the specification (it refuses the titled multi-select
// of SEP-1330 whose items say "type": "string", which the go-sdk's own
// conformance server sends).
func (rt *routes) middleware(c *UpstreamConfig) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if er, ok := req.(*mcp.ElicitRequest); ok && method == "elicitation/create" && er.Params != nil {
				return rt.elicit(ctx, c, er)
			}
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			p, _ := req.GetParams().(*mcp.ListRootsParams)
			var meta mcp.Meta
			if p != nil {
				meta = p.Meta
			}
			r, _, why := rt.routeFor(c, meta)
			if r == nil {
				return nil, errNoRoute(c.Domain, method, why)
			}
			if b := r.bridgeOf(); b != nil {
				if p == nil {
					p = &mcp.ListRootsParams{}
				}
				resp, err := b.ask(ctx, method, p)
				if err != nil {
					return nil, err
				}
				res, ok := resp.(*mcp.ListRootsResult)
				if !ok {
					return nil, fmt.Errorf("the client answered roots/list with %T", resp)
				}
				return res, nil
			}
			if err := unbridged(r, method); err != nil {
				return nil, err
			}
			return r.ss.ListRoots(r.ctx, p)
		}
	}
}

// scrubParams returns p, the params of a request of an upstream's to a
// client, with the secrets toolscout knows replaced (redact.go), as its
// results are: p itself when it holds none.
func scrubParams[P any](secrets *redact.Redactor, p *P) *P {
	if p == nil || !secrets.Active() {
		return p
	}
	b, err := json.Marshal(p)
	if err != nil {
		return p
	}
	clean, changed := secrets.JSON(b)
	if !changed {
		return p
	}
	out := new(P)
	if !json.Valid(clean) || json.Unmarshal(clean, out) != nil {
		return p
	}
	return out
}

// metaOf returns the _meta of a request's params (nil params: none).
func metaOf[P any, PP interface {
	*P
	GetMeta() map[string]any
}](p PP) mcp.Meta {
	if p == nil {
		return nil
	}
	return p.GetMeta()
}

// newProtocol is the first protocol version whose requests carry the
// client's capabilities and whose results may require input (SEP-2322).
const newProtocol = "2026-07-28"

// passInput carries what the client's call says to the upstream: the
// inputResponses and requestState of a retry after an input-required
// result, untouched, and, to an upstream of the 2026-07-28 protocol
// (which reads them per request), the client's own capabilities and log
// level instead of toolscout's.
func passInput(session *mcp.ClientSession, req *mcp.CallToolRequest, params *mcp.CallToolParams) {
	if req.Params == nil {
		return
	}
	params.InputResponses = req.Params.InputResponses
	params.RequestState = req.Params.RequestState
	ir := session.InitializeResult()
	if ir == nil || ir.ProtocolVersion < newProtocol {
		return
	}
	// Added to what params already says (the progress token toolscout
	// gives the upstream for a client that asked for progress), not in
	// its place.
	meta := params.Meta
	if meta == nil {
		meta = mcp.Meta{}
	}
	if caps, ok := req.Params.Meta[mcp.MetaKeyClientCapabilities]; ok {
		meta[mcp.MetaKeyClientCapabilities] = caps
	} else {
		meta[mcp.MetaKeyClientCapabilities] = capabilitiesOf(req.Session)
	}
	// The client's own level when its request says one; else all, and
	// ServerSession.Log passes on what the level its session set lets
	// through (none when it set none).
	if lvl, ok := req.Params.Meta[mcp.MetaKeyLogLevel]; ok {
		meta[mcp.MetaKeyLogLevel] = lvl
	} else {
		meta[mcp.MetaKeyLogLevel] = "debug"
	}
	params.Meta = meta
}

// openLogging asks a server of 2025-11-25 that declares logging for all
// its log messages (logging/setLevel debug): a server sends none before
// its client sets a level, and one level serves every client, each of
// which gets what its own logging/setLevel lets through
// (ServerSession.Log). A server of 2026-07-28 is told per request
// (passInput).
func openLogging(ctx context.Context, u *upstream, session *mcp.ClientSession) {
	ir := session.InitializeResult()
	if ir == nil || ir.Capabilities == nil || ir.Capabilities.Logging == nil || ir.ProtocolVersion >= newProtocol {
		return
	}
	if err := session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		u.env.log.Warn("upstream refused logging/setLevel; its log messages may not reach the clients", "domain", u.cfg.Domain, "err", u.env.opts.Redactor.Error(err))
	}
}

// capabilitiesOf returns the capabilities ss's client declared, as the
// wire has them (the go-sdk's ClientCapabilities marshals roots as {}
// even when the client declared none: RootsV2 says).
func capabilitiesOf(ss *mcp.ServerSession) map[string]any {
	out := map[string]any{}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil {
		return out
	}
	b, err := json.Marshal(ip.Capabilities)
	if err != nil || json.Unmarshal(b, &out) != nil {
		return map[string]any{}
	}
	delete(out, "roots")
	if r := ip.Capabilities.RootsV2; r != nil {
		out["roots"] = r
	}
	return out
}

// forwardProgress relays an upstream's progress notification to the client
// whose call it belongs to, under that client's own token, on its call.
func (rt *routes) forwardProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	id, _ := req.Params.ProgressToken.(string)
	rt.mu.Lock()
	r := rt.byID[id]
	rt.mu.Unlock()
	if r == nil || r.token == nil {
		return
	}
	defer r.done()
	p := *req.Params
	p.ProgressToken = r.token
	p.Meta = nil
	p.Message = rt.secrets.String(p.Message)
	_ = r.ss.NotifyProgress(context.WithoutCancel(r.ctx), &p)
}
