package server

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/surface"
)

// Prompts and resources of the upstream servers pass through toolscout
// (server/surface): each view's go-sdk server lists them, with the names
// prefixed as tools are (domain__name) and the URIs as
// toolscout://DOMAIN/<the upstream's URI>; gets, reads and subscriptions
// go to the upstream. This file is where the server wires that in: the
// surface is made when the Executor is a source of them (the gateway),
// and each view is configured, attached while it follows the catalog
// (addViewLocked) and detached when dropped. A view answers one caller
// (view.who): it lists, and gets, reads, completes and subscribes to,
// only what that caller may see (visibility).

// passThrough is what a Server needs of its executor to pass prompts and
// resources through.
type passThrough interface {
	surface.Source
	surface.Fetcher
}

// newSurface returns the surface over exec, or nil when exec does not
// pass prompts and resources through (a catalog-only server).
func newSurface(exec Executor, opts Options) *surface.Surface {
	src, ok := ability[passThrough](exec)
	if !ok {
		return nil
	}
	return surface.New(surface.Options{Source: src, Fetcher: src, ListTTL: ListTTL, StartupWait: opts.StartupWait, Logger: opts.Logger,
		OwnNames: opts.Expose.Names == ToolNamesServer})
}

// visibility is what v's caller may see of the prompts and resources
// (callers.Caller.Visible, by the upstream's name of each), nil when
// callers are not configured.
func visibility(v *view) surface.Visibility {
	if v.who == nil {
		return nil
	}
	return v.who
}

// surfaceOptions sets the server options v needs for the surface.
func surfaceOptions(sf *surface.Surface, v *view, o *mcp.ServerOptions) {
	if sf != nil {
		sf.Configure(o, visibility(v))
	}
}

// surfaceMiddleware adds the surface's receiving middleware to a view.
func surfaceMiddleware(sf *surface.Surface, v *view) {
	if sf != nil {
		v.mcp.AddReceivingMiddleware(sf.Middleware(visibility(v)))
	}
}

// attachSurface lists the prompts and resources v's caller sees on v and
// keeps them in step; detachSurface stops. sf may be nil (none).
func attachSurface(sf *surface.Surface, v *view) {
	if sf != nil {
		sf.Attach(v.mcp, visibility(v))
	}
}

func detachSurface(sf *surface.Surface, v *view) {
	if sf != nil {
		sf.Detach(v.mcp)
	}
}
