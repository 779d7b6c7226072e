package server

import (
	"container/list"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/surface"
)

// view is one MCP server over the shared engine: the primary one, or one
// per HTTP session in dynamic mode. Each has its own directly listed tools.
// A session's view is owned by that session: it is made for the request
// that opens the session and dropped when the session ends (see
// HTTPHandler).
type view struct {
	mcp *mcp.Server
	// direct holds the tools listed directly: listed name (names.go) →
	// the tool's qualified name and listingKey. Guarded by exposure.mu.
	direct map[string]string
	// enabled is dynamic mode's "domain" or "domain/group". Guarded by
	// exposure.mu.
	enabled map[string]bool
	// dynamic is set when the view was made with enable_domain and
	// disable_domain; toolset when it was made for one stateless request's
	// toolset. Both are fixed before the view serves.
	dynamic, toolset bool
	sync             listSync // each change of direct is whole to clients
	// who is the caller the view answers (nil: no callers configured),
	// fixed when the view is made.
	who *callers.Caller
}

// viewTable is the table of the views that follow the catalog: the
// primary one, a session's (dynamic mode over HTTP), each caller's and
// the toolsets'. It keeps them apart from what they list, as the go-sdk's
// StreamableHTTPHandler keeps its sessions apart from mcp.Server: its mu
// guards the membership only, and is never held while calling out, but
// to the surface (attachSurface) and the go-sdk's session list. The
// exposure, which lists each view's tools, adds a view only once it has
// listed its tools, holding exposure.mu (taken before mu, never after).
type viewTable struct {
	surface *surface.Surface // attached to each view while it is in the table

	mu       sync.Mutex
	primary  *view                     // the stdio (or shared HTTP) server; set once by New
	views    map[*view]struct{}        // every view in the table
	toolsets toolsetViews              // the views of the toolsets stateless requests carried last
	byCaller map[*callers.Caller]*view // each caller's view (exposure.callerView)
}

// newViewTable returns an empty table whose views get sf's prompts and
// resources.
func newViewTable(sf *surface.Surface) *viewTable {
	return &viewTable{surface: sf, views: map[*view]struct{}{}}
}

// setPrimary adds v as the primary view.
func (t *viewTable) setPrimary(v *view) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.primary = v
	t.addLocked(v)
}

// main returns the primary view.
func (t *viewTable) main() *view {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.primary
}

// add adds v.
func (t *viewTable) add(v *view) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addLocked(v)
}

func (t *viewTable) addLocked(v *view) {
	t.views[v] = struct{}{}
	attachSurface(t.surface, v)
}

// removeLocked takes v out of the table: it no longer follows the
// catalog, and nothing of it stays reachable from here. A request still
// using it finishes with it. t.mu is held.
func (t *viewTable) removeLocked(v *view) {
	delete(t.views, v)
	detachSurface(t.surface, v)
}

// all returns the views in the table now.
func (t *viewTable) all() []*view {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*view, 0, len(t.views))
	for v := range t.views {
		out = append(out, v)
	}
	return out
}

// adopt hands v to the session that the request it was made for opened:
// v is dropped when that session ends (DELETE, idle expiry, closed
// transport), or now when the request opened none or it has already
// ended.
func (t *viewTable) adopt(v *view) {
	var ss *mcp.ServerSession
	for ss = range v.mcp.Sessions() {
		break
	}
	if ss == nil {
		t.drop(v)
		return
	}
	go func() {
		ss.Wait()
		t.drop(v)
	}()
}

// drop takes v, unless it is the primary view, out of the table.
func (t *viewTable) drop(v *view) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v != t.primary {
		t.removeLocked(v)
	}
}

// sessionCount is Server.SessionCount.
func (t *viewTable) sessionCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for v := range t.views {
		for ss := range v.mcp.Sessions() {
			if ss.ID() != "" {
				n++
			}
		}
	}
	return n
}

// count is Server.ViewCount.
func (t *viewTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.views)
}

// maxToolsetViews bounds the views kept for toolsets (toolsetViews); a
// var so that tests can lower it.
var maxToolsetViews = 32

// toolsetViews keeps the views of the toolsets that stateless requests
// carried last, at most maxToolsetViews: a view costs about as much to
// make as the request it answers (the meta-tools and every enabled tool
// registered with the go-sdk), and a client that sends a toolset sends
// the same one with each request. Guarded by viewTable.mu.
type toolsetViews struct {
	byHandle map[string]*list.Element // of toolsetEntry, most recently used first
	order    list.List
}

type toolsetEntry struct {
	handle string
	v      *view
}

// toolsetKey is the key of a toolset's view: each caller's toolset views
// are its own.
func toolsetKey(h string, who *callers.Caller) string {
	if who != nil {
		return who.Name + " " + h
	}
	return h
}

// toolset returns the view kept for the toolset whose handle is h, made
// for who, or nil.
func (t *viewTable) toolset(h string, who *callers.Caller) *view {
	t.mu.Lock()
	defer t.mu.Unlock()
	if el, ok := t.toolsets.byHandle[toolsetKey(h, who)]; ok && el.Value.(toolsetEntry).v.who == who {
		t.toolsets.order.MoveToFront(el)
		return el.Value.(toolsetEntry).v
	}
	return nil
}

// keepToolset adds v, the view of the toolset whose handle is h, made
// for who, in place of the least recently used when there are too many;
// a view kept for h that was made for the caller's previous definition
// (its lists changed since: callers.Set.Replace) is not served again.
func (t *viewTable) keepToolset(h string, who *callers.Caller, v *view) {
	h = toolsetKey(h, who)
	t.mu.Lock()
	defer t.mu.Unlock()
	if el, ok := t.toolsets.byHandle[h]; ok {
		t.toolsets.order.Remove(el)
		delete(t.toolsets.byHandle, h)
		t.removeLocked(el.Value.(toolsetEntry).v)
	}
	t.addLocked(v)
	if t.toolsets.byHandle == nil {
		t.toolsets.byHandle = map[string]*list.Element{}
	}
	t.toolsets.byHandle[h] = t.toolsets.order.PushFront(toolsetEntry{h, v})
	for t.toolsets.order.Len() > maxToolsetViews {
		old := t.toolsets.order.Remove(t.toolsets.order.Back()).(toolsetEntry)
		delete(t.toolsets.byHandle, old.handle)
		t.removeLocked(old.v)
	}
}

// ofCaller returns c's view, or nil.
func (t *viewTable) ofCaller(c *callers.Caller) *view {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byCaller[c]
}

// keepCaller adds v as c's view. A view of the caller's previous
// definition (callers.Set.Replace made a new Caller when its lists
// changed) is no longer served.
func (t *viewTable) keepCaller(c *callers.Caller, v *view) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addLocked(v)
	if t.byCaller == nil {
		t.byCaller = map[*callers.Caller]*view{}
	}
	for old, ov := range t.byCaller {
		if old != c && c != nil && old != nil && old.Name == c.Name && ov != t.primary {
			delete(t.byCaller, old)
			t.removeLocked(ov)
		}
	}
	t.byCaller[c] = v
}
