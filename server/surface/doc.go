// Package surface passes the upstream servers' prompts, resources and
// resource templates through toolscout's MCP server: listed under names
// and URIs of toolscout's own, got, read and subscribed to on the
// upstream they came from.
//
//	s := surface.New(surface.Options{Source: gw.Surfaces(), Fetcher: gw.Surfaces(), ListTTL: time.Minute})
//	opts := &mcp.ServerOptions{}
//	s.Configure(opts, nil)              // capabilities, handlers; nil: no callers
//	srv := mcp.NewServer(impl, opts)
//	srv.AddReceivingMiddleware(s.Middleware(nil))
//	s.Attach(srv, nil)                  // lists them on srv, in step until Detach
//
// Completions (completion/complete) of a prompt's arguments or a
// template's variables go to the upstream the ref names, as gets do.
//
// Naming: a prompt (or resource) named N on the upstream of domain D is
// listed as D__N, as tools are; a resource or template URI U as
// toolscout://D/U (URIScheme: why a prefix, and this one). Reads, gets
// and subscriptions undo that by text; an upstream's own URI or prompt
// name is accepted too when one upstream has it.
//
// Design: the go-sdk server of every view registers the items (AddPrompt,
// AddResource, AddResourceTemplate), so that pagination with cursors,
// list_changed to clients of both protocol generations, subscriptions
// (resources/subscribe and subscriptions/listen) and the capabilities
// come from the go-sdk as they do for tools. A state (state.go) is built
// whole from the Source after each change, reusing the entries that did
// not change so that each view registers only the difference (mirror).
// Middleware answers prompts/get and resources/read itself, not through
// the registered handlers: an upstream's own URI (a resource_link in a
// tool result) is not registered, and an unknown name must be an
// invalid-params error that names it and the candidates. Subscriptions
// (subscribe.go) are counted per upstream resource: one upstream
// subscription for any number of client sessions, ended with the last;
// a session that ends without unsubscribing is noticed at the next
// update.
//
// Per caller: each attached server answers one caller, described by a
// Visibility (the server passes its view's *callers.Caller) given to
// Configure, Middleware and Attach alike: the server registers only
// what that caller may see, so its lists page and announce changes
// like anyone's, and gets, reads, completions and subscriptions of the
// rest are answered as unknown. The lists are then cacheScope private.
//
// Place in the flow: under server, beside server/gateway, whose Gateway's
// Surfaces are the Source, Fetcher and Subscriber (it bounds what a flooding
// upstream lists: gateway.MaxSurfaceItems and its siblings). The package
// imports gateway for the Surface type only and knows nothing of the
// meta-tools or views.
package surface
