package server

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/search"
)

// DiscoverArgs are discover_tools' arguments.
type DiscoverArgs struct {
	Domain     string `json:"domain,omitempty"`
	Group      string `json:"group,omitempty"`
	Query      string `json:"query,omitempty"`
	SearchMode string `json:"search_mode,omitempty"`
	Limit      int    `json:"limit,omitempty"`
}

// DomainEntry is one domain of the table of contents.
type DomainEntry struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	ToolCount   int      `json:"tool_count"`
	Groups      []string `json:"groups,omitempty"`
}

// Contents is discover_tools' answer without arguments.
type Contents struct {
	Domains    []DomainEntry `json:"domains"`
	TotalTools int           `json:"total_tools"`
}

// ToolEntry is one tool of a listing or a ranked answer.
type ToolEntry struct {
	Name    string `json:"name"`
	Domain  string `json:"domain,omitempty"`
	Group   string `json:"group,omitempty"`
	Summary string `json:"summary,omitempty"`
	// Warnings are the tool's poisoning flags: read its full description
	// with care before using it.
	Warnings []string `json:"warnings,omitempty"`
}

// DomainListing is discover_tools' answer for a domain (and group).
type DomainListing struct {
	Domain string      `json:"domain"`
	Group  string      `json:"group,omitempty"`
	Tools  []ToolEntry `json:"tools"`
	// Total is the number of tools before Limit cut the list, when it did.
	Total int `json:"total,omitempty"`
}

// SearchAnswer is discover_tools' answer for a query.
type SearchAnswer struct {
	Query      string      `json:"query"`
	SearchMode string      `json:"search_mode"`
	Embedder   string      `json:"embedder"`
	Notice     string      `json:"notice,omitempty"`
	Results    []ToolEntry `json:"results"`
}

func (s *Server) addMetaTools(srv *mcp.Server) {
	schema := func(props map[string]any, required ...string) map[string]any {
		m := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			m["required"] = required
		}
		return m
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	mcp.AddTool(srv, &mcp.Tool{
		Name:        DiscoverTools,
		Description: "Find tools. No arguments: list domains. domain (and group): list its tools. query: rank tools for a task.",
		InputSchema: schema(map[string]any{
			"query":       str("the task in words"),
			"domain":      str("browse or limit to a domain"),
			"group":       str("a group of the domain"),
			"search_mode": map[string]any{"type": "string", "enum": []string{"hybrid", "keyword", "semantic"}},
			"limit":       map[string]any{"type": "integer", "minimum": 1, "maximum": search.MaxLimit},
		}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
	}, s.discover)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        GetToolSchema,
		Description: "Full description and input schema of one tool (tool_name) or several (tool_names).",
		InputSchema: schema(map[string]any{
			"tool_name":  map[string]any{"type": "string"},
			"tool_names": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
	}, s.getSchema)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ExecuteTool,
		Description: "Run a tool with arguments that match its schema.",
		InputSchema: schema(map[string]any{
			"tool_name": map[string]any{"type": "string"},
			"arguments": map[string]any{"type": "object"},
		}, "tool_name"),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
	}, s.execute)
}

func (s *Server) discover(ctx context.Context, req *mcp.CallToolRequest, args DiscoverArgs) (*mcp.CallToolResult, any, error) {
	s.waitReady(ctx)
	cat := s.eng.Catalog()
	if args.Query != "" {
		resp, err := s.eng.Search(ctx, search.Request{Query: args.Query, Mode: search.Mode(args.SearchMode), Domain: args.Domain, Group: args.Group, Limit: args.Limit})
		if err != nil {
			return nil, nil, err
		}
		out := SearchAnswer{Query: resp.Query, SearchMode: string(resp.Mode), Embedder: resp.Embedder, Notice: resp.Notice, Results: []ToolEntry{}}
		for _, r := range resp.Results {
			out.Results = append(out.Results, ToolEntry{Name: r.Tool.QualifiedName, Domain: r.Tool.Domain, Group: r.Tool.Group, Summary: r.Tool.Summary, Warnings: r.Tool.Warnings})
		}
		return nil, out, nil
	}
	if args.SearchMode != "" {
		return nil, nil, errors.New("search_mode needs a query: pass query with the task in words")
	}
	if args.Domain == "" && args.Group == "" {
		out := Contents{Domains: []DomainEntry{}, TotalTools: cat.Len()}
		for _, d := range cat.Domains() {
			out.Domains = append(out.Domains, DomainEntry{Name: d.Name, Description: d.Description, ToolCount: len(d.Tools), Groups: d.Groups})
		}
		return nil, out, nil
	}
	if err := search.CheckScope(cat, args.Domain, args.Group); err != nil {
		return nil, nil, err
	}
	d := cat.Domain(args.Domain)
	out := DomainListing{Domain: d.Name, Group: args.Group, Tools: []ToolEntry{}}
	for _, t := range d.Tools {
		if args.Group != "" && t.Group != args.Group {
			continue
		}
		out.Tools = append(out.Tools, ToolEntry{Name: t.QualifiedName, Group: t.Group, Summary: t.Summary, Warnings: t.Warnings})
	}
	if args.Limit > 0 && len(out.Tools) > args.Limit {
		out.Total = len(out.Tools)
		out.Tools = out.Tools[:args.Limit]
	}
	return nil, out, nil
}
