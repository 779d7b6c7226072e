package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
)

// ExposeDynamic lists the tools of the domains (and groups) the model
// enabled with enable_domain, per session (or per toolset).
const ExposeDynamic Mode = "dynamic"

var dynamicPolicy = modePolicy{mode: ExposeDynamic, lists: listsEnabled, dynamic: true,
	workflow: metaWorkflow + " enable_domain lists a domain's tools directly."}

// listsEnabled lists the tools of the enabled domains and groups.
func listsEnabled(in listInput, t *index.Tool) bool { return enabledIn(in.enabled, t) }

// enabledIn reports whether the set keys (a view's or a toolset's)
// enables t's domain or group.
func enabledIn(keys map[string]bool, t *index.Tool) bool {
	return keys[t.Domain] || t.Group != "" && keys[t.Domain+"/"+t.Group]
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

// dynamicTools answers dynamic mode's enable_domain and disable_domain.
type dynamicTools struct {
	scope  *callerScope
	start  *startup
	expo   *exposure
	status toolStatus
	// schemas are the Server's (toolschemas.go).
	schemas *toolSchemas
}

// add registers enable_domain and disable_domain on v.
func (dt *dynamicTools) add(v *view) {
	ann := &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: boolPtr(false), DestructiveHint: boolPtr(false)}
	mcp.AddTool(v.mcp, &mcp.Tool{Name: EnableDomain, Description: "List a domain's (or group's) tools directly, callable by name. Pass toolset from an earlier answer to change that set.", InputSchema: dt.schemas.input[EnableDomain], Annotations: ann},
		func(ctx context.Context, req *mcp.CallToolRequest, args DomainArgs) (*mcp.CallToolResult, any, error) {
			return dt.setEnabled(ctx, v, req, args, true)
		})
	mcp.AddTool(v.mcp, &mcp.Tool{Name: DisableDomain, Description: "Stop listing a domain's (or group's) tools directly.", InputSchema: dt.schemas.input[DisableDomain], Annotations: ann},
		func(ctx context.Context, req *mcp.CallToolRequest, args DomainArgs) (*mcp.CallToolResult, any, error) {
			return dt.setEnabled(ctx, v, req, args, false)
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
func (dt *dynamicTools) setEnabled(ctx context.Context, v *view, req *mcp.CallToolRequest, args DomainArgs, on bool) (*mcp.CallToolResult, any, error) {
	if args.Domain == "" {
		return nil, nil, fmt.Errorf("pass domain; list domains with discover_tools")
	}
	dt.start.waitReady(ctx) // the domain may be an upstream that is still connecting
	cat := dt.scope.catalogFor(v.who)
	down := dt.scope.unavailableFor(v.who)
	warnings, err := checkEnableScope(cat, down, args, on)
	if err != nil {
		return nil, nil, err
	}
	key := args.Domain
	if args.Group != "" {
		key += "/" + args.Group
	}
	var base map[string]bool
	if args.Toolset != "" {
		var dropped []string
		if base, dropped, err = toolsetBase(cat, down, args.Toolset); err != nil {
			return nil, nil, err
		}
		if len(dropped) > 0 {
			warnings = append(warnings, fmt.Sprintf("the toolset named %s, which this server does not have: left out", strings.Join(dropped, ", ")))
		}
	}
	stateless := statelessCall(req.Extra)
	before, base := dt.expo.enable(v, base, key, on, stateless)
	out := EnableAnswer{Enabled: slices.Sorted(maps.Keys(base)), Toolset: encodeToolset(base), Warnings: warnings}
	if out.Enabled == nil {
		out.Enabled = []string{}
	}
	if on {
		// For clients that ignore tools/list_changed: the names work with
		// execute_tool as well.
		out.Tools = enabledEntries(cat.Domain(args.Domain), args.Group, dt.status)
		out.Note = enableNote
		if stateless {
			out.Note = statelessNote
		}
		return nil, out, nil
	}
	out.Removed, out.Note = disabledOutcome(cat.Domain(args.Domain), args.Domain, key, before, base)
	return nil, out, nil
}

// checkEnableScope checks that args name a domain (and group) of cat, or
// a server without tools (down) when they name no group; it returns the
// warning that such a server's tools are listed once it lists them.
func checkEnableScope(cat *index.Catalog, down map[string]string, args DomainArgs, on bool) ([]string, error) {
	why, isDown := down[args.Domain]
	if !isDown || cat.Domain(args.Domain) != nil {
		return nil, search.CheckScope(cat, args.Domain, args.Group)
	}
	// A configured server that has not listed its tools: its tools are
	// listed when it does (its groups are not known yet).
	if args.Group != "" {
		return nil, fmt.Errorf("group %s of domain %q: %s, so its groups are not known yet; pass the domain alone", search.Quote(args.Group, 100), args.Domain, serverDown(args.Domain, why))
	}
	if on {
		return []string{serverDown(args.Domain, why) + ": its tools are listed when it lists them"}, nil
	}
	return nil, nil
}

// toolsetBase returns the keys of the toolset whose handle is h that
// cat (or a server without tools, down) has, and those it does not.
func toolsetBase(cat *index.Catalog, down map[string]string, h string) (known map[string]bool, dropped []string, err error) {
	keys, err := decodeToolset(h)
	if err != nil {
		return nil, nil, toolsetError(h, err)
	}
	known, dropped = knownKeys(cat, down, keys)
	return known, dropped, nil
}

// enabledEntries returns the entries of d's enabled tools (of group
// only, when set); d may be nil (a server without tools).
func enabledEntries(d *index.Domain, group string, status toolStatus) []ToolEntry {
	if d == nil {
		return nil
	}
	var out []ToolEntry
	for _, t := range d.Tools {
		if (group == "" || t.Group == group) && !t.Disabled {
			out = append(out, status.entry(t))
		}
	}
	return out
}

// disabledOutcome says what disabling key (domain or domain/group) took
// off the list: the tools of d the set listed before and does not now
// (a group's tools stay while their domain is enabled), and a note when
// that is nothing.
func disabledOutcome(d *index.Domain, domain, key string, before, after map[string]bool) (removed []string, note string) {
	if d != nil {
		for _, t := range d.Tools {
			if !t.Disabled && enabledIn(before, t) && !enabledIn(after, t) {
				removed = append(removed, t.QualifiedName)
			}
		}
	}
	switch {
	case !before[key]:
		note = fmt.Sprintf("%s was not enabled: nothing removed", key)
	case len(removed) == 0 && key != domain && after[domain]:
		note = fmt.Sprintf("%s's tools stay listed: domain %s is enabled", key, domain)
	}
	return removed, note
}
