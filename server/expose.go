package server

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
)

// Exposure modes: what tools/list shows besides the three meta-tools.
const (
	ExposeMeta    = "meta"    // nothing else
	ExposeEager   = "eager"   // every tool, under its qualified name
	ExposeCore    = "core"    // the pinned tools
	ExposeDynamic = "dynamic" // the tools of domains the model enabled
)

// ExposeModes lists the valid modes.
var ExposeModes = []string{ExposeMeta, ExposeEager, ExposeCore, ExposeDynamic}

// Exposure chooses what tools/list shows.
type Exposure struct {
	Mode string
	// Pinned lists qualified names or globs ("github__*") for core mode.
	Pinned []string
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
	mcp     *mcp.Server
	direct  map[string]string // qualified name → hash of tools listed directly
	enabled map[string]bool   // dynamic mode: "domain" or "domain/group"
}

// newViewLocked makes a view and keeps it in step with the catalog until
// dropView. s.mu is held.
func (s *Server) newViewLocked() *view {
	v := s.newView(s.expose.Mode == ExposeDynamic)
	s.addViewLocked(v)
	return v
}

// newView makes a view with the meta-tools (and, when dynamic, enable_domain
// and disable_domain) but no direct tools yet. It reads no guarded state, so
// that sessions opening at once build their views in parallel.
func (s *Server) newView(dynamic bool) *view {
	v := &view{direct: map[string]string{}, enabled: map[string]bool{}}
	v.mcp = mcp.NewServer(s.impl, &mcp.ServerOptions{Instructions: s.instr, Logger: s.log})
	s.addMetaTools(v.mcp)
	if dynamic {
		s.addDynamicTools(v)
	}
	return v
}

// addViewLocked lists v's direct tools and keeps them in step with the
// catalog until dropView. s.mu is held.
func (s *Server) addViewLocked(v *view) {
	s.syncViewLocked(v)
	s.views[v] = struct{}{}
}

// newSessionView makes the view for a request that may open a session in
// dynamic mode, or returns nil in the other modes (all sessions share the
// primary view).
func (s *Server) newSessionView() *view {
	s.mu.Lock()
	dynamic := s.expose.Mode == ExposeDynamic
	s.mu.Unlock()
	if !dynamic {
		return nil
	}
	v := s.newView(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addViewLocked(v)
	return v
}

// adoptView hands v to the session that the request it was made for
// opened: v is dropped when that session ends (DELETE, idle expiry, closed
// transport), or now when the request opened none or it has already
// ended.
func (s *Server) adoptView(v *view) {
	var ss *mcp.ServerSession
	for ss = range v.mcp.Sessions() {
		break
	}
	if ss == nil {
		s.dropView(v)
		return
	}
	go func() {
		ss.Wait()
		s.dropView(v)
	}()
}

// dropView stops keeping v in step with the catalog, so that nothing of it
// stays reachable.
func (s *Server) dropView(v *view) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v != s.primary {
		delete(s.views, v)
	}
}

// wanted returns the catalog tools that the exposure lists directly in v.
func (s *Server) wanted(cat *index.Catalog, v *view) []*index.Tool {
	var out []*index.Tool
	for _, t := range cat.Tools() {
		switch s.expose.Mode {
		case ExposeEager:
			out = append(out, t)
		case ExposeCore:
			for _, p := range s.expose.Pinned {
				if ok, _ := path.Match(p, t.QualifiedName); ok || p == t.QualifiedName {
					out = append(out, t)
					break
				}
			}
		case ExposeDynamic:
			if v.enabled[t.Domain] || t.Group != "" && v.enabled[t.Domain+"/"+t.Group] {
				out = append(out, t)
			}
		}
	}
	return out
}

// syncDirectToolsLocked brings every view's directly listed tools up to
// date. s.mu is held.
func (s *Server) syncDirectToolsLocked() {
	for v := range s.views {
		s.syncViewLocked(v)
	}
}

// syncViewLocked adds and removes v's directly listed tools so that they
// match the exposure and the current catalog. The SDK tells the view's
// clients with notifications/tools/list_changed. s.mu is held.
func (s *Server) syncViewLocked(v *view) {
	if s.expose.Mode == "" || s.expose.Mode == ExposeMeta {
		return
	}
	want := map[string]*index.Tool{}
	for _, t := range s.wanted(s.eng.Catalog(), v) {
		if t.QualifiedName == DiscoverTools || t.QualifiedName == GetToolSchema || t.QualifiedName == ExecuteTool {
			continue
		}
		want[t.QualifiedName] = t
	}
	var remove []string
	for name, hash := range v.direct {
		if t, ok := want[name]; !ok || t.Hash != hash {
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
		v.mcp.AddTool(mcpTool(t), s.directHandler(name))
		v.direct[name] = t.Hash
	}
}

// directHandler runs a directly listed tool, looked up by name at call
// time so that a re-index never leaves a stale tool behind.
func (s *Server) directHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		t := s.eng.Catalog().Tool(name)
		if t == nil {
			return errorResult("tool %s is no longer available; search with discover_tools", name), nil
		}
		args := map[string]any{}
		if req.Params != nil && len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return errorResult("arguments for %s must be a JSON object: %v", name, err), nil
			}
		}
		res, err := s.run(ctx, req, t, args)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return errorResult("%v", err), nil
		}
		return res, nil
	}
}

// DomainArgs are enable_domain's and disable_domain's arguments.
type DomainArgs struct {
	Domain string `json:"domain"`
	Group  string `json:"group,omitempty"`
}

// EnableAnswer says what a dynamic-mode call changed.
type EnableAnswer struct {
	Enabled []string    `json:"enabled"`
	Tools   []ToolEntry `json:"tools,omitempty"`
	Note    string      `json:"note,omitempty"`
}

func (s *Server) addDynamicTools(v *view) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"domain": map[string]any{"type": "string"},
		"group":  map[string]any{"type": "string"},
	}, "required": []string{"domain"}}
	ann := &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: boolPtr(false), DestructiveHint: boolPtr(false)}
	mcp.AddTool(v.mcp, &mcp.Tool{Name: EnableDomain, Description: "List a domain's (or group's) tools directly, callable by name.", InputSchema: schema, Annotations: ann},
		func(ctx context.Context, req *mcp.CallToolRequest, args DomainArgs) (*mcp.CallToolResult, any, error) {
			return s.setEnabled(v, args, true)
		})
	mcp.AddTool(v.mcp, &mcp.Tool{Name: DisableDomain, Description: "Stop listing a domain's (or group's) tools directly.", InputSchema: schema, Annotations: ann},
		func(ctx context.Context, req *mcp.CallToolRequest, args DomainArgs) (*mcp.CallToolResult, any, error) {
			return s.setEnabled(v, args, false)
		})
}

func (s *Server) setEnabled(v *view, args DomainArgs, on bool) (*mcp.CallToolResult, any, error) {
	cat := s.eng.Catalog()
	if args.Domain == "" {
		return nil, nil, fmt.Errorf("pass domain; list domains with discover_tools")
	}
	if err := search.CheckScope(cat, args.Domain, args.Group); err != nil {
		return nil, nil, err
	}
	key := args.Domain
	if args.Group != "" {
		key += "/" + args.Group
	}
	s.mu.Lock()
	if on {
		v.enabled[key] = true
	} else {
		delete(v.enabled, key)
	}
	s.syncViewLocked(v)
	out := EnableAnswer{Enabled: []string{}}
	for k := range v.enabled {
		out.Enabled = append(out.Enabled, k)
	}
	s.mu.Unlock()
	sort.Strings(out.Enabled)
	if on {
		// For clients that ignore tools/list_changed: the names work with
		// execute_tool as well.
		for _, t := range cat.Domain(args.Domain).Tools {
			if args.Group == "" || t.Group == args.Group {
				out.Tools = append(out.Tools, ToolEntry{Name: t.QualifiedName, Group: t.Group, Summary: t.Summary, Warnings: t.Warnings})
			}
		}
		out.Note = "These tools are now in tools/list. If your client does not refresh its list, call them through execute_tool."
	}
	return nil, out, nil
}

// eagerTools returns every catalog tool as an MCP tool under its qualified
// name, as an aggregating proxy would list it.
func eagerTools(cat *index.Catalog) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, cat.Len())
	for _, t := range cat.Tools() {
		out = append(out, mcpTool(t))
	}
	return out
}

// mcpTool turns a catalog tool into the MCP tool listed under its qualified
// name.
func mcpTool(t *index.Tool) *mcp.Tool {
	mt := &mcp.Tool{Name: t.QualifiedName, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema}
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
