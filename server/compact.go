package server

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/arguments"
	"github.com/toolscout/toolscout/server/condense"
)

// Compact listing: what a model reads to pick a tool and call it. Each
// entry says what the tool does (its description condensed to a headline
// of at most nine words: server/condense) and what a call must send: the
// required properties with their types and short enums
// (arguments.Compact), and nothing else, so that the listing stays
// within issue 35's 45 tokens a tool (o200k_base, the meta-tools
// counted). Every property keeps its type and every array its items,
// which clients check (Gemini CLI skips a tool with an untyped property,
// VS Code one with an array without items). The entry leaves out the
// optional properties (get_tool_schema lists them; until issue 35's
// budget they filled each entry up to 45 tokens, 378 tokens on the
// built-in catalog) and what only a client's interface reads: the title
// (the name is shown instead) and the annotations, whose absence means
// the protocol's cautious defaults (not read-only, destructive, open
// world), so that a client that confirms calls by them asks more, never
// less; and the output schema. get_tool_schema gives the whole
// description and schema with examples, and a call is checked against
// the whole schema, its errors saying what to send.
//
// Condensed listing (Exposure.Condense): the tools listed directly keep
// their whole entry but for the description, condensed as in compact
// mode.

// listing says how tools/list shows the tools it lists directly.
type listing struct {
	compact  bool // compact entries (compact mode)
	condense bool // condensed descriptions (compact mode, or Exposure.Condense)
}

// listedTool is t as tools/list shows it.
func listedTool(t *index.Tool, l listing) *mcp.Tool {
	mt := mcpTool(t)
	if l.condense {
		mt.Description = deprecationNote(t) + condense.SummaryFor(t.Description, t.Domain)
	}
	if !l.compact {
		return mt
	}
	mt.Title, mt.Annotations, mt.OutputSchema = "", nil, nil
	mt.InputSchema = arguments.Compact(t.InputSchema()).Schema(0)
	return mt
}

// listingKey identifies what tools/list shows of t: a view lists a tool
// again when it changes.
func listingKey(t *index.Tool, l listing) string {
	k := t.Hash + "\x00" + t.Deprecated
	if l.compact {
		k += "\x00compact"
	}
	if l.condense {
		k += "\x00condense"
	}
	return k
}

// listedDescription is t's description as a listing shows it: a
// deprecated tool's says so first.
func listedDescription(t *index.Tool) string {
	return deprecationNote(t) + t.Description
}

// deprecationNote is what a listing says before a deprecated tool's
// description: "Deprecated. ", or "Deprecated: use X instead. ".
func deprecationNote(t *index.Tool) string {
	switch t.Deprecated {
	case "":
		return ""
	case index.DeprecatedTrue:
		return "Deprecated. "
	}
	return "Deprecated: " + strings.TrimRight(t.Deprecated, ".") + ". "
}

// ExposeCompact lists every tool with its description condensed and an
// input schema of its required properties (arguments.Compact);
// get_tool_schema gives the whole one, and calls are checked against the
// whole one.
const ExposeCompact Mode = "compact"

var compactPolicy = modePolicy{mode: ExposeCompact, lists: listsEvery, gated: true,
	workflow: "Every tool is listed with a summary and its required arguments: call it by name. get_tool_schema gives a tool's optional arguments, full description and examples; discover_tools with a query finds the right one for a task."}

// listing returns how x lists tools.
func (x Exposure) listing() listing {
	compact := x.Mode == ExposeCompact
	return listing{compact: compact, condense: compact || x.Condense}
}
