package gateway

import (
	"context"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/callers"
)

// Per-caller credentials for remote upstreams (issue 34, item 3). The
// gateway keeps one session per upstream, opened with the config's
// Headers; a tool call of a caller that the config maps (CallerHeaders)
// carries that caller's headers instead of Headers, and only those (issue
// 52, item 8: a mapped caller also sent the server's shared X-Api-Key; an
// operator who wants a shared header for it lists it in its mapping). A
// caller whose own Authorization the config forwards
// (ForwardAuthorization) sends it in place of Headers' Authorization,
// with the rest of Headers. Either goes on that call's HTTP request only:
// the go-sdk sends a call with its context, which the header transport
// reads. Listing tools, and the calls of callers not mapped, use Headers.
//
// This fits servers of the stateless protocol (2026-07-28, each request
// on its own), which toolscout asks for first, and servers that do not
// tie a session to the user who opened it; a server that does refuses
// the other callers' calls, which come back as ErrUnauthorized naming
// the server.

type callHeadersKey struct{}

// callHeaderSet is what one call's HTTP request carries besides the
// transport's own headers.
type callHeaderSet struct {
	headers map[string]string
	// only: headers are all the call sends, none of the config's Headers
	// (a mapped caller's); otherwise they are set on top of Headers.
	only bool
}

// withCallHeaders returns ctx carrying h for the HTTP requests made with
// it (ctx itself when it has no headers).
func withCallHeaders(ctx context.Context, h callHeaderSet) context.Context {
	if len(h.headers) == 0 {
		return ctx
	}
	return context.WithValue(ctx, callHeadersKey{}, h)
}

// callHeadersOf returns the headers withCallHeaders put in ctx.
func callHeadersOf(ctx context.Context) callHeaderSet {
	h, _ := ctx.Value(callHeadersKey{}).(callHeaderSet)
	return h
}

// callHeaders returns the headers a call made by ctx's (or req's) caller
// carries: the caller's mapped ones, instead of c.Headers; else
// (ForwardAuthorization) the Authorization of the caller's own request,
// on top of c.Headers; none for a command server, or a caller without
// either.
func (c *UpstreamConfig) callHeaders(ctx context.Context, req *mcp.CallToolRequest) callHeaderSet {
	if c.URL == "" {
		return callHeaderSet{}
	}
	// The caller: the server's view's (stdio's, from TOOLSCOUT_CALLER,
	// too), else the request's token user.
	name := ""
	if who := callers.FromContext(ctx); who != nil {
		name = who.Name
	} else if req != nil && req.Extra != nil && req.Extra.TokenInfo != nil {
		name = req.Extra.TokenInfo.UserID
	}
	if h := c.CallerHeaders[name]; name != "" && len(h) > 0 {
		return callHeaderSet{headers: maps.Clone(h), only: true}
	}
	if c.ForwardAuthorization && req != nil && req.Extra != nil && req.Extra.Header != nil {
		if a := req.Extra.Header.Get("Authorization"); a != "" {
			return callHeaderSet{headers: map[string]string{"Authorization": a}}
		}
	}
	return callHeaderSet{}
}
