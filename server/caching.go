package server

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ListTTL is the freshness hint (ttlMs, SEP-2549) of a tools/list that
// is the same for every client, and of server/discover. A list changes
// when upstream tools change or the server falls back to eager; clients
// that listen are told at once (notifications/tools/list_changed), the
// others see the change within this time.
const ListTTL = time.Minute

// Cache scopes (SEP-2549).
const (
	cachePublic  = "public"  // the same answer for every client
	cachePrivate = "private" // this client's answer
)

// cacheable returns the go-sdk hook that sets ttlMs and cacheScope on v's
// results, truthfully:
//
//   - server/discover is the same for every client: public, ListTTL;
//   - without dynamic mode, tools/list is too: public, ListTTL;
//   - in dynamic mode a list that follows one client's enable_domain (a
//     session's view, the stdio client's, a stateless request's toolset)
//     is private, and no list is cached (ttlMs 0): the same request with
//     and without a toolset in its _meta has different answers, and the
//     go-sdk client keys its cache on the cursor alone. The list a
//     stateless request without a toolset gets is public;
//   - with callers configured (Options.Callers) every answer is the
//     caller's own, server/discover too (its instructions name the
//     caller's domains): private, with the TTLs above.
//
// The go-sdk calls it with its server's lock held: it reads only what is
// fixed when v is made.
func cacheable(v *view) func(context.Context, mcp.Request, *mcp.Cacheable) {
	return func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
		if _, ok := req.GetParams().(*mcp.DiscoverParams); ok || !v.dynamic {
			c.TTLMs, c.CacheScope = int(ListTTL.Milliseconds()), cachePublic
		} else {
			c.TTLMs, c.CacheScope = 0, cachePrivate
			if !v.toolset && statelessCall(req.GetExtra()) {
				c.CacheScope = cachePublic
			}
		}
		if v.who != nil {
			c.CacheScope = cachePrivate
		}
	}
}
