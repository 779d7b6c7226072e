package server

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
)

// Compact listing: every tool with its description and a stripped input
// schema, the names and types of its top-level properties (and the values
// of a short enum), which properties are required, nothing more. The
// model reads enough to pick a tool and call it; get_tool_schema gives
// the whole schema with examples, and a call is checked against the
// whole schema, its errors saying what to fix.

// maxCompactEnum is the most values an enum keeps in a compact schema.
const maxCompactEnum = 8

// compactSchema strips an input schema down to its top-level properties'
// types (and short enums) and required list.
func compactSchema(raw json.RawMessage) map[string]any {
	full := decodedSchema(raw)
	out := map[string]any{"type": "object"}
	props, _ := full["properties"].(map[string]any)
	if len(props) > 0 {
		small := make(map[string]any, len(props))
		for name, p := range props {
			ps, _ := p.(map[string]any)
			sp := map[string]any{}
			if typ, ok := ps["type"]; ok {
				sp["type"] = typ
			}
			if enum, ok := ps["enum"].([]any); ok && len(enum) <= maxCompactEnum {
				sp["enum"] = enum
			}
			small[name] = sp
		}
		out["properties"] = small
	}
	if req, ok := full["required"].([]any); ok && len(req) > 0 {
		out["required"] = req
	}
	return out
}

// listedTool is t as tools/list shows it: whole, or with a compact schema
// and no output schema.
func listedTool(t *index.Tool, compact bool) *mcp.Tool {
	mt := mcpTool(t)
	if compact {
		mt.InputSchema = compactSchema(t.InputSchema)
		mt.OutputSchema = nil
	}
	return mt
}

// listingKey identifies what tools/list shows of t: a view lists a tool
// again when it changes.
func listingKey(t *index.Tool, compact bool) string {
	k := t.Hash + "\x00" + t.Deprecated
	if compact {
		k += "\x00compact"
	}
	return k
}

// listedDescription is t's description as a listing shows it: a
// deprecated tool's says so first.
func listedDescription(t *index.Tool) string {
	switch t.Deprecated {
	case "":
		return t.Description
	case index.DeprecatedTrue:
		return "Deprecated. " + t.Description
	}
	return "Deprecated: " + strings.TrimRight(t.Deprecated, ".") + ". " + t.Description
}
