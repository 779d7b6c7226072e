package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tiktoken-go/tokenizer"

	"github.com/toolscout/toolscout/search"
)

// TokenReport is what a client pays in context tokens, counted with the
// o200k_base BPE vocabulary (compiled into the binary, no download).
type TokenReport struct {
	Encoding string `json:"encoding"`
	Tools    int    `json:"tools"`
	Domains  int    `json:"domains"`
	// EagerToolsList is tools/list with every tool and its full schema.
	EagerToolsList int `json:"eager_tools_list"`
	// MetaToolsList is toolscout's tools/list: the three meta-tools.
	MetaToolsList int `json:"meta_tools_list"`
	Instructions  int `json:"instructions"`
	// Typical responses.
	DiscoverContents int `json:"discover_contents"`
	DiscoverQuery    int `json:"discover_query"`
	GetToolSchema    int `json:"get_tool_schema"`
	// SchemaExamples and SchemaRelated are the parts of GetToolSchema
	// that its examples and related_tools take.
	SchemaExamples int `json:"get_tool_schema_examples"`
	SchemaRelated  int `json:"get_tool_schema_related_tools"`
	// SchemaMax is the largest get_tool_schema answer for one tool over
	// every tool of the catalog (as GetToolSchema is counted), and
	// SchemaMaxTool that tool.
	SchemaMax     int    `json:"get_tool_schema_max"`
	SchemaMaxTool string `json:"get_tool_schema_max_tool"`
	// Saved is the fraction of the eager tools/list that meta mode saves,
	// counting the instructions against it.
	Saved float64 `json:"saved"`
	// Extra holds named additions, such as the tools an exposure mode lists
	// directly.
	Extra map[string]int `json:"extra,omitempty"`
}

// CountInstructions counts the tokens of the instructions a client's
// initialize gets from the server.
func (s *Server) CountInstructions(ctx context.Context) (int, error) {
	return s.countAsClient(ctx, func(cs *mcp.ClientSession) (string, error) {
		return cs.InitializeResult().Instructions, nil
	})
}

// CountToolsList counts the tokens of the server's tools/list answer.
func (s *Server) CountToolsList(ctx context.Context) (int, error) {
	return s.countAsClient(ctx, func(cs *mcp.ClientSession) (string, error) {
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(list)
		return string(b), err
	})
}

// countAsClient connects an in-memory client to the server's primary
// view and counts the o200k_base tokens of what read returns of it.
func (s *Server) countAsClient(ctx context.Context, read func(*mcp.ClientSession) (string, error)) (int, error) {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return 0, err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.views.main().mcp.Connect(ctx, st, nil)
	if err != nil {
		return 0, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "toolscout-tokens", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	text, err := read(cs)
	if err != nil {
		return 0, err
	}
	return enc.Count(text)
}

// CountTokens measures the server's own tools/list and typical answers
// through an in-memory client, and the eager alternative.
func (s *Server) CountTokens(ctx context.Context, query string) (*TokenReport, error) {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, err
	}
	count := func(v any) (int, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return 0, err
		}
		return enc.Count(string(b))
	}
	cat := s.eng.Catalog()
	rep := &TokenReport{Encoding: string(tokenizer.O200kBase), Tools: cat.Len(), Domains: len(cat.Domains())}
	if rep.EagerToolsList, err = count(&mcp.ListToolsResult{Tools: eagerTools(cat, false)}); err != nil {
		return nil, err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.views.main().mcp.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "toolscout-tokens", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	if rep.MetaToolsList, err = count(list); err != nil {
		return nil, err
	}
	if rep.Instructions, err = enc.Count(cs.InitializeResult().Instructions); err != nil {
		return nil, err
	}
	answer := func(name string, args map[string]any) (int, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return 0, err
		}
		if res.IsError {
			return 0, fmt.Errorf("%s: tool error", name)
		}
		// The model reads the content; structuredContent carries the same JSON.
		return count(res.Content)
	}
	if rep.DiscoverContents, err = answer(DiscoverTools, map[string]any{}); err != nil {
		return nil, err
	}
	if rep.DiscoverQuery, err = answer(DiscoverTools, map[string]any{"query": query, "limit": 5}); err != nil {
		return nil, err
	}
	resp, err := s.eng.Search(ctx, search.Request{Query: query, Limit: 1})
	if err == nil && len(resp.Results) > 0 {
		t := resp.Results[0].Tool
		rep.GetToolSchema, err = answer(GetToolSchema, map[string]any{"tool_name": t.QualifiedName})
		if err != nil {
			return nil, err
		}
		if exs := s.meta.status.examples(t); len(exs) > 0 {
			if rep.SchemaExamples, err = count(map[string]any{"examples": exs}); err != nil {
				return nil, err
			}
		}
		if rel, _ := s.eng.Related(ctx, t, maxRelated); len(rel) > 0 {
			if rep.SchemaRelated, err = count(map[string]any{"related_tools": relatedEntries(rel)}); err != nil {
				return nil, err
			}
		}
	}
	for _, t := range cat.Tools() {
		if t.Disabled {
			continue
		}
		n, err := answer(GetToolSchema, map[string]any{"tool_name": t.QualifiedName})
		if err != nil {
			return nil, err
		}
		if n > rep.SchemaMax {
			rep.SchemaMax, rep.SchemaMaxTool = n, t.QualifiedName
		}
	}
	if rep.EagerToolsList > 0 {
		rep.Saved = 1 - float64(rep.MetaToolsList+rep.Instructions)/float64(rep.EagerToolsList)
	}
	return rep, nil
}
