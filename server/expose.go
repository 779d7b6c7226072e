package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/gateway"
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

// viewMaker makes the views the exposure lists tools in (viewBuilder,
// the Server's wiring).
type viewMaker interface {
	// newView makes a view with the meta-tools (and, when dynamic,
	// enable_domain and disable_domain) but no direct tools.
	newView(dynamic bool, who *callers.Caller) *view
	// directHandler runs the tool listed directly in v whose qualified
	// name is name.
	directHandler(v *view, name string) mcp.ToolHandler
}

// exposure is the mechanism that applies the mode's policy (mode.go): it
// lists in each view of the table the tools the mode's list function
// gives, and changes the mode when the eager fallback asks. Its mu guards
// the mode, auto mode's decisions and the views' direct and enabled sets;
// it is taken before the table's (views.mu), never after. Views are made
// (maker) outside the lock, and added to the table once they list their
// tools.
type exposure struct {
	eng   *search.Engine
	scope *callerScope
	log   *slog.Logger
	maker viewMaker
	views *viewTable

	mu     sync.Mutex // guards what follows and the views' direct and enabled
	expose Exposure   // the mode: Options.Expose, eager after a fallback
	auto   autoMode   // auto mode's decisions

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

// dynamic reports whether the mode gives views enable_domain and
// disable_domain, and so a view per session.
func (e *exposure) dynamic() bool { return policyOf(e.mode()).dynamic }

// setPrimary makes the primary view, for who, and keeps it in step with
// the catalog.
func (e *exposure) setPrimary(who *callers.Caller) {
	v := e.maker.newView(e.dynamic(), who)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.syncViewLocked(v)
	e.views.setPrimary(v)
}

// newSessionView makes the view for a request that may open a session in
// dynamic mode, or returns nil in the other modes (all sessions share the
// primary view).
func (e *exposure) newSessionView(who *callers.Caller) *view {
	if !e.dynamic() {
		return nil
	}
	v := e.maker.newView(true, who)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.syncViewLocked(v)
	e.views.add(v)
	return v
}

// toolsetView returns the view that lists the tools of keys, a set whose
// handle is h: the one kept for h, or a new one (viewTable.keepToolset).
func (e *exposure) toolsetView(h string, keys map[string]bool, who *callers.Caller) *view {
	if v := e.views.toolset(h, who); v != nil {
		return v
	}
	v := e.maker.newView(true, who) // outside the lock, as newSessionView
	v.enabled, v.toolset = keys, true
	e.mu.Lock()
	defer e.mu.Unlock()
	if old := e.views.toolset(h, who); old != nil { // made meanwhile by another request
		return old
	}
	e.syncViewLocked(v)
	e.views.keepToolset(h, who, v)
	return v
}

// callerView returns the view of c's requests that have no view of
// their own (all of them, but dynamic mode's sessions and toolsets):
// made on c's first request and kept in step with the catalog.
func (e *exposure) callerView(c *callers.Caller) *view {
	if v := e.views.ofCaller(c); v != nil {
		return v
	}
	v := e.maker.newView(e.dynamic(), c) // outside the lock, as newSessionView
	e.mu.Lock()
	defer e.mu.Unlock()
	if old := e.views.ofCaller(c); old != nil { // made meanwhile
		return old
	}
	e.syncViewLocked(v)
	e.views.keepCaller(c, v)
	return v
}

// catalogChanged brings every view's directly listed tools up to date.
func (e *exposure) catalogChanged() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, v := range e.views.all() {
		e.syncViewLocked(v)
	}
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
	listed = e.expose.Mode.listsTool(e.listInputLocked(cat, v), t)
	return direct, listed, listedName(cat, t, e.expose.Names), e.expose.Mode == ExposeDynamic
}

// listInputLocked is what the mode decides v's list from, over cat (the
// catalog v's caller sees). e.mu is held.
func (e *exposure) listInputLocked(cat *index.Catalog, v *view) listInput {
	return listInput{cat: cat, who: v.who, enabled: v.enabled, expose: e.expose,
		fits: func(c *index.Catalog) bool { return e.auto.eager(c, e.eng.Catalog(), e.expose, e.log) }}
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
		v.mcp.AddTool(mt, e.maker.directHandler(v, t.QualifiedName))
		v.direct[name] = keyOf(t)
		if hook := e.addToolHook.Load(); hook != nil {
			(*hook)()
		}
	}
	return len(remove) > 0 || len(names) > 0
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
	for _, v := range e.views.all() {
		e.syncViewLocked(v)
	}
	return true
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
	mt := &mcp.Tool{Name: t.QualifiedName, Title: t.Title, Description: listedDescription(t), InputSchema: t.InputSchema()}
	if len(t.OutputSchema()) > 0 {
		mt.OutputSchema = t.OutputSchema()
	}
	if len(t.Annotations()) > 0 {
		var a mcp.ToolAnnotations
		if json.Unmarshal(t.Annotations(), &a) == nil {
			mt.Annotations = &a
		}
	}
	return mt
}
