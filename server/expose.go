package server

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/gateway"
	"github.com/toolscout/toolscout/server/surface"
)

// Exposure chooses what tools/list shows.
type Exposure struct {
	// Mode is the exposure mode; "" lists as meta does.
	Mode Mode
	// Pinned lists qualified names or globs ("github__*") for core mode.
	Pinned []string
	// Budget is auto mode's token budget (DefaultAutoBudget when zero).
	Budget int
	// Condense lists the tools listed directly (eager, core, dynamic,
	// auto) with their descriptions condensed to ~15 words, as compact
	// mode always does; get_tool_schema gives them whole.
	Condense bool
	// Names is the tool_names setting: ToolNamesQualified ("" too) or
	// ToolNamesServer (names.go).
	Names string
}

// Dynamic-mode tool names.
const (
	EnableDomain  = "enable_domain"
	DisableDomain = "disable_domain"
)

// view is one MCP server over the shared engine: the primary one, or one
// per HTTP session in dynamic mode. Each has its own directly listed tools.
// A session's view is owned by that session: it is made for the request
// that opens the session and dropped when the session ends (see
// HTTPHandler).
type view struct {
	mcp *mcp.Server
	// direct holds the tools listed directly: listed name (names.go) →
	// the tool's qualified name and listingKey.
	direct  map[string]string
	enabled map[string]bool // dynamic mode: "domain" or "domain/group"
	// dynamic is set when the view was made with enable_domain and
	// disable_domain; toolset when it was made for one stateless request's
	// toolset. Both are fixed before the view serves.
	dynamic, toolset bool
	sync             listSync // each change of direct is whole to clients
	// who is the caller the view answers (nil: no callers configured),
	// fixed when the view is made.
	who *callers.Caller
}

// exposure is the list state: the views, what each lists directly under
// the exposure mode, and the mode itself (which the eager fallback
// changes). Its mu guards all of it and the views' direct tools; the
// views are made by build (the Server's wiring) outside the lock.
type exposure struct {
	eng     *search.Engine
	scope   *callerScope
	log     *slog.Logger
	surface *surface.Surface // attached to each view while it follows the catalog
	// build makes a view with the meta-tools and the middleware but no
	// direct tools; handler runs a directly listed tool.
	build   func(dynamic bool, who *callers.Caller) *view
	handler func(v *view, name string) mcp.ToolHandler

	mu       sync.Mutex                // guards what follows and the views' direct and enabled
	expose   Exposure                  // the mode: Options.Expose, eager after a fallback
	primary  *view                     // the stdio (or shared HTTP) server; set once by New
	views    map[*view]struct{}        // the primary, one per HTTP session in dynamic mode, the toolsets'
	toolsets toolsetViews              // the views of the toolsets stateless requests carried last
	byCaller map[*callers.Caller]*view // each caller's view (callerView)
	auto     autoMode                  // auto mode's decisions

	// addToolHook, when set (by tests), runs after each tool a view of
	// this server adds: a pause there is what a busy machine does to a
	// long change. Per server, not a package variable, so that tests
	// that set it can run in parallel.
	addToolHook atomic.Pointer[func()]
}

// mode returns the exposure mode now.
func (e *exposure) mode() Mode {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.expose.Mode
}

// setPrimary makes the primary view, for who, and keeps it in step with
// the catalog.
func (e *exposure) setPrimary(who *callers.Caller) {
	v := e.build(e.mode() == ExposeDynamic, who)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.primary = v
	e.addViewLocked(v)
}

// enable changes v's enabled set, or a copy of base when base is not nil
// (a toolset's), turning key on or off. Unless stateless, v keeps the
// result and lists its tools. It returns the set before and after.
func (e *exposure) enable(v *view, base map[string]bool, key string, on, stateless bool) (before, after map[string]bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if base == nil {
		base = maps.Clone(v.enabled)
		if base == nil {
			base = map[string]bool{}
		}
	}
	before = maps.Clone(base)
	if on {
		base[key] = true
	} else {
		delete(base, key)
	}
	if !stateless {
		v.enabled = base
		e.syncViewLocked(v)
		base = maps.Clone(base)
	}
	return before, base
}

// listed reports whether v lists t under name now (direct), would list
// it (listed) and under what name (as), and whether the mode is dynamic.
func (e *exposure) listed(cat *index.Catalog, v *view, t *index.Tool, name string) (direct, listed bool, as string, dynamic bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key, direct := v.direct[name]
	direct = direct && strings.HasPrefix(key, t.QualifiedName+"\x00")
	return direct, e.listedLocked(cat, v, t), listedName(cat, t, e.expose.Names), e.expose.Mode == ExposeDynamic
}

// sessionCount is Server.SessionCount.
func (e *exposure) sessionCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for v := range e.views {
		for ss := range v.mcp.Sessions() {
			if ss.ID() != "" {
				n++
			}
		}
	}
	return n
}

// viewCount is Server.ViewCount.
func (e *exposure) viewCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.views)
}

// newView makes a view with the meta-tools (and, when dynamic, enable_domain
// and disable_domain) but no direct tools yet. It reads no guarded state, so
// that sessions opening at once build their views in parallel.
func (s *Server) newView(dynamic bool, who *callers.Caller) *view {
	v := &view{direct: map[string]string{}, enabled: map[string]bool{}, dynamic: dynamic, who: who}
	so := &mcp.ServerOptions{Logger: s.sdkLog, SetCacheable: cacheable(v)}
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
		s.meta.addDynamic(v)
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

// maxToolsetViews bounds the views kept for toolsets (toolsetViews); a
// var so that tests can lower it.
var maxToolsetViews = 32

// toolsetViews keeps the views of the toolsets that stateless requests
// carried last, at most maxToolsetViews: a view costs about as much to
// make as the request it answers (the meta-tools and every enabled tool
// registered with the go-sdk), and a client that sends a toolset sends
// the same one with each request. Guarded by exposure.mu.
type toolsetViews struct {
	byHandle map[string]*list.Element // of toolsetEntry, most recently used first
	order    list.List
}

type toolsetEntry struct {
	handle string
	v      *view
}

// directHandler runs a directly listed tool, looked up by its qualified
// name at call time so that a re-index never leaves a stale tool behind.
func (mt *metaTools) directHandler(v *view, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mt.callDirect(ctx, v, req, name)
	}
}

// callDirect runs the tool whose qualified name is name for a tools/call
// by name (req's name may be its own name: names.go).
func (mt *metaTools) callDirect(ctx context.Context, v *view, req *mcp.CallToolRequest, name string) (*mcp.CallToolResult, error) {
	call := mt.audit.begin(req, AuditDirect, name)
	t := mt.scope.catalogFor(v.who).Tool(name)
	if t == nil {
		res := errorResult("tool %s is no longer available; search with discover_tools", name)
		call.end(ctx, nil, res, FailUnknownTool, nil)
		return res, nil
	}
	call.resolved(t)
	args := map[string]any{}
	if req.Params != nil && len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			res := errorResult("arguments for %s must be a JSON object: %v", name, err)
			call.end(ctx, nil, res, FailInvalidArguments, nil)
			return res, nil
		}
	}
	res, fail, err := mt.runRefusable(ctx, req, t, args, true)
	call.end(ctx, args, res, fail, err)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		if w := gateway.WireError(err); w != nil {
			// The tool's own server refused the call (-32021 for a
			// capability the client did not declare, -32602 for a
			// tampered requestState, ...): the client gets its error as
			// it would directly, not a result that reads as the tool
			// having run.
			return nil, w
		}
		return errorResult("%v", err), nil
	}
	return res, nil
}

// DomainArgs are enable_domain's and disable_domain's arguments.
type DomainArgs struct {
	Domain string `json:"domain"`
	Group  string `json:"group,omitempty"`
	// Toolset, when set, is the set to change (one an earlier answer
	// returned) instead of the connection's own.
	Toolset string `json:"toolset,omitempty"`
}

// EnableAnswer says what a dynamic-mode call changed.
type EnableAnswer struct {
	Enabled []string `json:"enabled"`
	// Toolset is the handle of the enabled set (toolset.go).
	Toolset string      `json:"toolset"`
	Tools   []ToolEntry `json:"tools,omitempty"`
	// Removed, in disable_domain's answer, lists the tools no longer
	// listed.
	Removed  []string `json:"removed,omitempty"`
	Note     string   `json:"note,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// addDynamic registers enable_domain and disable_domain on v.
func (mt *metaTools) addDynamic(v *view) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"domain":  map[string]any{"type": "string"},
		"group":   map[string]any{"type": "string"},
		"toolset": map[string]any{"type": "string"},
	}, "required": []string{"domain"}}
	ann := &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: boolPtr(false), DestructiveHint: boolPtr(false)}
	mcp.AddTool(v.mcp, &mcp.Tool{Name: EnableDomain, Description: "List a domain's (or group's) tools directly, callable by name. Pass toolset from an earlier answer to change that set.", InputSchema: schema, Annotations: ann},
		func(ctx context.Context, req *mcp.CallToolRequest, args DomainArgs) (*mcp.CallToolResult, any, error) {
			return mt.setEnabled(ctx, v, req, args, true)
		})
	mcp.AddTool(v.mcp, &mcp.Tool{Name: DisableDomain, Description: "Stop listing a domain's (or group's) tools directly.", InputSchema: schema, Annotations: ann},
		func(ctx context.Context, req *mcp.CallToolRequest, args DomainArgs) (*mcp.CallToolResult, any, error) {
			return mt.setEnabled(ctx, v, req, args, false)
		})
}

// Notes of enable_domain's answer: a connection's list follows its
// enable_domain; a stateless request's list is the same for everyone
// (SEP-2567: it may not change as a side effect of another request).
const (
	enableNote    = "These tools are now in tools/list. If your client does not refresh its list, call them through execute_tool."
	statelessNote = "Your client speaks the stateless protocol, where tools/list does not change: call these tools through execute_tool (get_tool_schema gives their arguments). To change this set, pass toolset to enable_domain or disable_domain. A client that sends the toolset in _meta \"" + ToolsetMetaKey + "\" gets these tools in tools/list and can call them by name."
)

// setEnabled enables or disables a domain (or group) in a set: the one
// args.Toolset names, else the view's. A session's view (and the stdio
// client's) keeps the result, which changes its tools/list; a stateless
// request changes nothing on the server and gets the result as a toolset
// only.
func (mt *metaTools) setEnabled(ctx context.Context, v *view, req *mcp.CallToolRequest, args DomainArgs, on bool) (*mcp.CallToolResult, any, error) {
	if args.Domain == "" {
		return nil, nil, fmt.Errorf("pass domain; list domains with discover_tools")
	}
	mt.start.waitReady(ctx) // the domain may be an upstream that is still connecting
	cat := mt.scope.catalogFor(v.who)
	down := mt.scope.unavailableFor(v.who)
	var warnings []string
	if why, isDown := down[args.Domain]; isDown && cat.Domain(args.Domain) == nil {
		// A configured server that has not listed its tools: its
		// tools are listed when it does (its groups are not known yet).
		if args.Group != "" {
			return nil, nil, fmt.Errorf("group %s of domain %q: %s, so its groups are not known yet; pass the domain alone", search.Quote(args.Group, 100), args.Domain, serverDown(args.Domain, why))
		}
		if on {
			warnings = append(warnings, serverDown(args.Domain, why)+": its tools are listed when it lists them")
		}
	} else if err := search.CheckScope(cat, args.Domain, args.Group); err != nil {
		return nil, nil, err
	}
	key := args.Domain
	if args.Group != "" {
		key += "/" + args.Group
	}
	var base map[string]bool
	if args.Toolset != "" {
		keys, err := decodeToolset(args.Toolset)
		if err != nil {
			return nil, nil, toolsetError(args.Toolset, err)
		}
		var dropped []string
		base, dropped = knownKeys(cat, down, keys)
		if len(dropped) > 0 {
			warnings = append(warnings, fmt.Sprintf("the toolset named %s, which this server does not have: left out", strings.Join(dropped, ", ")))
		}
	}
	stateless := statelessCall(req.Extra)
	before, base := mt.expo.enable(v, base, key, on, stateless)
	out := EnableAnswer{Enabled: slices.Sorted(maps.Keys(base)), Toolset: encodeToolset(base), Warnings: warnings}
	if out.Enabled == nil {
		out.Enabled = []string{}
	}
	if on {
		// For clients that ignore tools/list_changed: the names work with
		// execute_tool as well.
		if d := cat.Domain(args.Domain); d != nil {
			for _, t := range d.Tools {
				if (args.Group == "" || t.Group == args.Group) && !t.Disabled {
					out.Tools = append(out.Tools, mt.entryOf(t))
				}
			}
		}
		out.Note = enableNote
		if stateless {
			out.Note = statelessNote
		}
		return nil, out, nil
	}
	// What disabling took off the list: the tools the set listed before
	// and does not now (a group's tools stay while their domain is
	// enabled).
	if d := cat.Domain(args.Domain); d != nil {
		for _, t := range d.Tools {
			if !t.Disabled && enabledIn(before, t) && !enabledIn(base, t) {
				out.Removed = append(out.Removed, t.QualifiedName)
			}
		}
	}
	switch {
	case !before[key]:
		out.Note = fmt.Sprintf("%s was not enabled: nothing removed", key)
	case len(out.Removed) == 0 && key != args.Domain && base[args.Domain]:
		out.Note = fmt.Sprintf("%s's tools stay listed: domain %s is enabled", key, args.Domain)
	}
	return nil, out, nil
}

// eagerTools returns every enabled catalog tool as an MCP tool under its
// qualified name, as an aggregating proxy would list it (compact: as
// compact mode lists it).
func eagerTools(cat *index.Catalog, compact bool) []*mcp.Tool {
	return listedTools(cat, listing{compact: compact, condense: compact})
}

// listedTools returns every enabled catalog tool as l lists it.
func listedTools(cat *index.Catalog, l listing) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, cat.Len())
	for _, t := range cat.Tools() {
		if !t.Disabled {
			out = append(out, listedTool(t, l))
		}
	}
	return out
}

// mcpTool turns a catalog tool into the MCP tool listed under its qualified
// name; a deprecated tool's description says so first.
func mcpTool(t *index.Tool) *mcp.Tool {
	mt := &mcp.Tool{Name: t.QualifiedName, Title: t.Title, Description: listedDescription(t), InputSchema: t.InputSchema}
	if len(t.OutputSchema) > 0 {
		mt.OutputSchema = t.OutputSchema
	}
	if len(t.Annotations) > 0 {
		var a mcp.ToolAnnotations
		if json.Unmarshal(t.Annotations, &a) == nil {
			mt.Annotations = &a
		}
	}
	return mt
}

// addViewLocked lists v's direct tools and keeps them in step with the
// catalog until dropView. e.mu is held.
func (e *exposure) addViewLocked(v *view) {
	e.syncViewLocked(v)
	e.views[v] = struct{}{}
	attachSurface(e.surface, v)
}

// newSessionView makes the view for a request that may open a session in
// dynamic mode, or returns nil in the other modes (all sessions share the
// primary view).
func (e *exposure) newSessionView(who *callers.Caller) *view {
	if !e.dynamic() {
		return nil
	}
	v := e.build(true, who)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.addViewLocked(v)
	return v
}

// toolsetView returns the view that lists the tools of keys, a set whose
// handle is h: the one kept for h, or a new one, kept in place of the
// least recently used when there are too many.
func (e *exposure) toolsetView(h string, keys map[string]bool, who *callers.Caller) *view {
	if who != nil {
		h = who.Name + " " + h // each caller's toolset views are its own
	}
	e.mu.Lock()
	if el, ok := e.toolsets.byHandle[h]; ok && el.Value.(toolsetEntry).v.who == who {
		e.toolsets.order.MoveToFront(el)
		e.mu.Unlock()
		return el.Value.(toolsetEntry).v
	}
	e.mu.Unlock()
	v := e.build(true, who) // outside the lock, as newSessionView
	v.enabled, v.toolset = keys, true
	e.mu.Lock()
	defer e.mu.Unlock()
	if el, ok := e.toolsets.byHandle[h]; ok {
		old := el.Value.(toolsetEntry)
		if old.v.who == who { // made meanwhile by another request
			return old.v
		}
		// Made for the caller's previous definition (its lists changed
		// since: callers.Set.Replace): not served again.
		e.toolsets.order.Remove(el)
		delete(e.toolsets.byHandle, h)
		delete(e.views, old.v)
		detachSurface(e.surface, old.v)
	}
	e.addViewLocked(v)
	if e.toolsets.byHandle == nil {
		e.toolsets.byHandle = map[string]*list.Element{}
	}
	e.toolsets.byHandle[h] = e.toolsets.order.PushFront(toolsetEntry{h, v})
	for e.toolsets.order.Len() > maxToolsetViews {
		old := e.toolsets.order.Remove(e.toolsets.order.Back()).(toolsetEntry)
		delete(e.toolsets.byHandle, old.handle)
		// A request still using it finishes with it; it no longer
		// follows catalog changes.
		delete(e.views, old.v)
		detachSurface(e.surface, old.v)
	}
	return v
}

// dynamic reports whether the exposure is dynamic.
func (e *exposure) dynamic() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.expose.Mode == ExposeDynamic
}

// adoptView hands v to the session that the request it was made for
// opened: v is dropped when that session ends (DELETE, idle expiry, closed
// transport), or now when the request opened none or it has already
// ended.
func (e *exposure) adoptView(v *view) {
	var ss *mcp.ServerSession
	for ss = range v.mcp.Sessions() {
		break
	}
	if ss == nil {
		e.dropView(v)
		return
	}
	go func() {
		ss.Wait()
		e.dropView(v)
	}()
}

// dropView stops keeping v in step with the catalog, so that nothing of it
// stays reachable.
func (e *exposure) dropView(v *view) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v != e.primary {
		delete(e.views, v)
		detachSurface(e.surface, v)
	}
}

// listInputLocked is what the mode decides v's list from, over cat (the
// catalog v's caller sees). e.mu is held.
func (e *exposure) listInputLocked(cat *index.Catalog, v *view) listInput {
	return listInput{cat: cat, who: v.who, enabled: v.enabled, expose: e.expose,
		fits: func(c *index.Catalog) bool { return e.auto.eager(c, e.eng.Catalog(), e.expose, e.log) }}
}

// listedLocked reports whether the exposure lists t directly in v: never
// a disabled tool. e.mu is held.
func (e *exposure) listedLocked(cat *index.Catalog, v *view, t *index.Tool) bool {
	return slices.ContainsFunc(e.expose.Mode.lists(e.listInputLocked(cat, v)), func(l *index.Tool) bool {
		return l.QualifiedName == t.QualifiedName
	})
}

// syncDirectToolsLocked brings every view's directly listed tools up to
// date. e.mu is held.
func (e *exposure) syncDirectToolsLocked() {
	for v := range e.views {
		e.syncViewLocked(v)
	}
}

// syncViewLocked adds and removes v's directly listed tools so that they
// match the exposure and the current catalog, as one change (listSync):
// the view's clients get one notifications/tools/list_changed for it, and
// no tools/list in between. e.mu is held.
func (e *exposure) syncViewLocked(v *view) {
	if e.expose.Mode == "" || e.expose.Mode == ExposeMeta {
		return
	}
	v.sync.begin()
	changed := e.changeViewLocked(v)
	v.sync.end(changed, v.mcp)
}

// changeViewLocked makes syncViewLocked's change and reports whether it
// changed anything. e.mu is held.
func (e *exposure) changeViewLocked(v *view) bool {
	want := map[string]*index.Tool{} // by listed name
	cat := e.scope.catalogFor(v.who)
	for _, t := range e.expose.Mode.lists(e.listInputLocked(cat, v)) {
		if !ownTool(t.QualifiedName) {
			want[listedName(cat, t, e.expose.Names)] = t
		}
	}
	how := e.expose.listing()
	// The key holds the qualified name: a listed name that passes to
	// another tool (its own, once a collision is gone) is listed again.
	keyOf := func(t *index.Tool) string { return t.QualifiedName + "\x00" + listingKey(t, how) }
	var remove []string
	for name, key := range v.direct {
		if t, ok := want[name]; !ok || keyOf(t) != key {
			remove = append(remove, name)
			delete(v.direct, name)
		}
	}
	if len(remove) > 0 {
		v.mcp.RemoveTools(remove...)
	}
	names := make([]string, 0, len(want))
	for name := range want {
		if _, ok := v.direct[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		t := want[name]
		mt := listedTool(t, how)
		mt.Name = name
		v.mcp.AddTool(mt, e.handler(v, t.QualifiedName))
		v.direct[name] = keyOf(t)
		if hook := e.addToolHook.Load(); hook != nil {
			(*hook)()
		}
	}
	return len(remove) > 0 || len(names) > 0
}

// callerView returns the view of c's requests that have no view of
// their own (all of them, but dynamic mode's sessions and toolsets):
// made on c's first request and kept in step with the catalog.
func (e *exposure) callerView(c *callers.Caller) *view {
	e.mu.Lock()
	if v := e.byCaller[c]; v != nil {
		e.mu.Unlock()
		return v
	}
	dynamic := e.expose.Mode == ExposeDynamic
	e.mu.Unlock()
	v := e.build(dynamic, c) // outside the lock, as newSessionView
	e.mu.Lock()
	defer e.mu.Unlock()
	if old := e.byCaller[c]; old != nil { // made meanwhile
		return old
	}
	e.addViewLocked(v)
	if e.byCaller == nil {
		e.byCaller = map[*callers.Caller]*view{}
	}
	// A view of the caller's previous definition (callers.Set.Replace
	// made a new Caller when its lists changed) is no longer served.
	for old, ov := range e.byCaller {
		if old != c && c != nil && old != nil && old.Name == c.Name && ov != e.primary {
			delete(e.byCaller, old)
			delete(e.views, ov)
			detachSurface(e.surface, ov)
		}
	}
	e.byCaller[c] = v
	return v
}

// enabledSet returns the domains and groups v enables in dynamic mode
// (nil in the other modes).
func (e *exposure) enabledSet(v *view) map[string]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.expose.Mode != ExposeDynamic {
		return nil
	}
	return maps.Clone(v.enabled)
}

// fallBackToEager is Server.FallBackToEager.
func (e *exposure) fallBackToEager(reason string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.expose.Mode == ExposeEager {
		return false
	}
	e.log.Error("listing every tool directly (fallback eager)", "reason", reason)
	e.expose.Mode = ExposeEager
	e.syncDirectToolsLocked()
	return true
}
