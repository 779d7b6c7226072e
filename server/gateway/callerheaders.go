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
// or whose own Authorization it forwards (ForwardAuthorization) carries
// those headers instead, on that call's HTTP request only: the go-sdk
// sends a call with its context, which the header transport reads.
// Listing tools, and the calls of callers not mapped, use Headers.
//
// This fits servers of the stateless protocol (2026-07-28, each request
// on its own), which toolscout asks for first, and servers that do not
// tie a session to the user who opened it; a server that does refuses
// the other callers' calls, which come back as ErrUnauthorized naming
// the server.

type callHeadersKey struct{}

// withCallHeaders returns ctx carrying headers for the HTTP requests made
// with it (ctx itself when there are none).
func withCallHeaders(ctx context.Context, h map[string]string) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return context.WithValue(ctx, callHeadersKey{}, h)
}

// callHeadersOf returns the headers withCallHeaders put in ctx.
func callHeadersOf(ctx context.Context) map[string]string {
	h, _ := ctx.Value(callHeadersKey{}).(map[string]string)
	return h
}

// callHeaders returns the headers a call made by ctx's (or req's) caller carries on
// top of c.Headers: the caller's mapped ones, else (ForwardAuthorization)
// the Authorization of the caller's own request; none for a command
// server, or a caller without either.
func (c *UpstreamConfig) callHeaders(ctx context.Context, req *mcp.CallToolRequest) map[string]string {
	if c.URL == "" {
		return nil
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
		return maps.Clone(h)
	}
	if c.ForwardAuthorization && req != nil && req.Extra != nil && req.Extra.Header != nil {
		if a := req.Extra.Header.Get("Authorization"); a != "" {
			return map[string]string{"Authorization": a}
		}
	}
	return nil
}
