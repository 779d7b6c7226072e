package server

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server/arguments"
)

// toolSchemas are the input schemas of the tools every view lists (the
// meta-tools, run_code in code mode, enable_domain and disable_domain in
// dynamic mode), made once per Server and shared by its views, with the
// go-sdk's cache of their resolved forms (keyed by the schema's
// pointer). A view is made per session in dynamic mode, per kept
// toolset and per caller; making its schemas anew each time (the maps
// encoded to JSON, decoded into jsonschema.Schema and resolved, by
// mcp.AddTool) was most of what a view cost
// (docs/benchmarks/2026-12-06-test-cpu-2.md). None of them depends on
// the catalog: only on the mode and code mode's limits, fixed per
// Server.
type toolSchemas struct {
	// cache is every view's mcp.ServerOptions.SchemaCache.
	cache *mcp.SchemaCache
	// input is each tool's input schema, by tool name.
	input map[string]*jsonschema.Schema
	// decoded are the meta-tools' input schemas as arguments.PlainErrors
	// reads them.
	decoded map[string]map[string]any
}

// newToolSchemas makes the schemas of the tools a view lists; code is
// code mode's (nil in the other modes). The schemas are constants of
// the program: one that does not decode panics, as mcp.AddTool would.
func newToolSchemas(code *Code) *toolSchemas {
	ts := &toolSchemas{cache: mcp.NewSchemaCache(), input: map[string]*jsonschema.Schema{}, decoded: map[string]map[string]any{}}
	inputs := metaInputs(code != nil)
	for name, in := range inputs {
		ts.decoded[name] = arguments.Decode(in)
	}
	if code != nil {
		inputs[RunCode] = runCodeInput(code.Limits.WithDefaults())
	}
	domain := domainInput()
	inputs[EnableDomain], inputs[DisableDomain] = domain, domain
	for name, in := range inputs {
		b, err := json.Marshal(in)
		if err != nil {
			panic(fmt.Sprintf("tool %q: input schema: %v", name, err))
		}
		s := new(jsonschema.Schema)
		if err := json.Unmarshal(b, s); err != nil {
			panic(fmt.Sprintf("tool %q: input schema: %v", name, err))
		}
		ts.input[name] = s
	}
	return ts
}

// metaInputs returns the meta-tools' input schemas; code adds what code
// mode offers (get_tool_schema's format).
func metaInputs(code bool) map[string]map[string]any {
	schema := func(props map[string]any, required ...string) map[string]any {
		m := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			m["required"] = required
		}
		return m
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	inputs := map[string]map[string]any{
		DiscoverTools: schema(map[string]any{
			"query":            str("the task in words"),
			"domain":           str("browse or limit to a domain"),
			"group":            str("a group in domain"),
			"search_mode":      map[string]any{"type": "string", "enum": []string{"hybrid", "keyword", "semantic"}, "description": "default hybrid"},
			"limit":            map[string]any{"type": "integer", "minimum": 1, "maximum": search.MaxLimit, "description": "most results"},
			"cursor":           str("the last next_cursor"),
			"include_disabled": map[string]any{"type": "boolean", "description": "also disabled tools"},
		}),
		GetToolSchema: schema(map[string]any{
			"tool_name":        str("a tool's name"),
			"tool_names":       map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "several names"},
			"include_examples": map[string]any{"type": "boolean", "description": "default true"},
		}),
		ExecuteTool: schema(map[string]any{
			"tool_name": str("the tool's name"),
			"arguments": map[string]any{"type": "object", "description": "its arguments"},
		}, "tool_name"),
	}
	if code {
		addCodeInputs(inputs)
	}
	return inputs
}

// domainInput is enable_domain's and disable_domain's input schema.
func domainInput() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"domain":  map[string]any{"type": "string"},
		"group":   map[string]any{"type": "string"},
		"toolset": map[string]any{"type": "string"},
	}, "required": []string{"domain"}}
}
