package server

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/surface"
)

// viewBuilder makes views (viewMaker): an MCP server each, with the
// parts of the Server that answer on it.
type viewBuilder struct {
	sdkLog  *slog.Logger
	impl    *mcp.Implementation
	surface *surface.Surface
	metrics *Metrics
	meta    *metaTools
	dynamic *dynamicTools
	greet   *greeting
	start   *startup
}

var _ viewMaker = (*viewBuilder)(nil)

// newView makes a view with the meta-tools (and, when dynamic, enable_domain
// and disable_domain) but no direct tools yet. It reads no guarded state, so
// that sessions opening at once build their views in parallel.
func (s *viewBuilder) newView(dynamic bool, who *callers.Caller) *view {
	v := &view{direct: map[string]string{}, enabled: map[string]bool{}, dynamic: dynamic, who: who}
	so := &mcp.ServerOptions{Logger: s.sdkLog, SetCacheable: cacheable(v), SchemaCache: s.meta.schemas.cache}
	if s.surface == nil {
		// A catalog-only server has no prompts or resources, but the go-sdk
		// answers prompts/list and resources/list whatever a server
		// declares: declare what is answered (empty lists), as
		// server/discover and initialize must (SEP-2575); they never change.
		so.Capabilities = &mcp.ServerCapabilities{
			Logging:   &mcp.LoggingCapabilities{},
			Prompts:   &mcp.PromptCapabilities{},
			Resources: &mcp.ResourceCapabilities{},
		}
	}
	surfaceOptions(s.surface, v, so)
	v.mcp = mcp.NewServer(s.impl, so)
	v.mcp.AddReceivingMiddleware(s.greet.middleware(v))
	surfaceMiddleware(s.surface, v)
	s.meta.add(v)
	if dynamic {
		s.dynamic.add(v)
	}
	v.mcp.AddReceivingMiddleware(s.start.middleware(v, s.meta.unlistedCall))
	v.mcp.AddReceivingMiddleware(callerMiddleware(v))
	if s.metrics != nil {
		// Last, so outermost (the go-sdk wraps in order): it counts what
		// the middlewares inside answer and times their waits too.
		v.mcp.AddReceivingMiddleware(s.metrics.middleware)
	}
	v.mcp.AddSendingMiddleware(v.sync.middleware)
	v.sync.srv = v.mcp
	return v
}

// directHandler runs a directly listed tool, looked up by its qualified
// name at call time so that a re-index never leaves a stale tool behind.
func (s *viewBuilder) directHandler(v *view, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.meta.callDirect(ctx, v, req, name)
	}
}
