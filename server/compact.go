package server

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/arguments"
)

// Compact listing: every tool with its description and a stripped input
// schema, the names and types of its top-level properties (and the values
// of a short enum), which properties are required, nothing more. The
// model reads enough to pick a tool and call it; get_tool_schema gives
// the whole schema with examples, and a call is checked against the
// whole schema, its errors saying what to fix.

// listedTool is t as tools/list shows it: whole, or with a compact schema
// and no output schema.
func listedTool(t *index.Tool, compact bool) *mcp.Tool {
	mt := mcpTool(t)
	if compact {
		mt.InputSchema = arguments.Compact(t.InputSchema)
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
