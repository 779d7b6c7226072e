package server

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tiktoken-go/tokenizer"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/arguments"
	"github.com/toolscout/toolscout/server/condense"
)

// Compact listing: what a model reads to pick a tool and call it. Each
// entry says what the tool does (its description condensed to at most 15
// words: server/condense) and what a call must send (the required
// properties with their types and short enums: arguments.Compact), then
// the optional properties, in the order the schema declares them, while
// the entry stays within compactBudget tokens. Every property keeps its
// type and every array its items, which clients check (Gemini CLI skips a
// tool with an untyped property, VS Code one with an array without
// items). The entry leaves out what only a client's interface reads: the
// title (the name is shown instead) and the annotations, whose absence
// means the protocol's cautious defaults (not read-only, destructive,
// open world), so that a client that confirms calls by them asks more,
// never less; and the output schema. get_tool_schema gives the whole
// description and schema with examples, and a call is checked against
// the whole schema, its errors saying what to send.
//
// Condensed listing (Exposure.Condense): the tools listed directly keep
// their whole entry but for the description, condensed as in compact
// mode.

// compactBudget is the most tokens (o200k_base) a compact entry grows to
// with optional properties, issue 35's target for a tool: an entry that
// is larger with its required properties alone gets none.
const compactBudget = 45

// listing says how tools/list shows the tools it lists directly.
type listing struct {
	compact  bool // compact entries (compact mode)
	condense bool // condensed descriptions (compact mode, or Exposure.Condense)
}

// listedTool is t as tools/list shows it.
func listedTool(t *index.Tool, l listing) *mcp.Tool {
	mt := mcpTool(t)
	if l.condense {
		mt.Description = deprecationNote(t) + condense.Summary(t.Description)
	}
	if !l.compact {
		return mt
	}
	mt.Title, mt.Annotations, mt.OutputSchema = "", nil, nil
	cs := arguments.Compact(t.InputSchema)
	mt.InputSchema = cs.Schema(0)
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return mt
	}
	fits := func(e *mcp.Tool) bool {
		b, err := json.Marshal(e)
		if err != nil {
			return false
		}
		c, err := enc.Count(string(b))
		return err == nil && c <= compactBudget
	}
	for n := 1; n <= cs.Optional(); n++ {
		next := *mt
		next.InputSchema = cs.Schema(n)
		if !fits(&next) {
			break
		}
		mt.InputSchema = next.InputSchema
	}
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

// listing returns how x lists tools.
func (x Exposure) listing() listing {
	compact := x.Mode == ExposeCompact
	return listing{compact: compact, condense: compact || x.Condense}
}
