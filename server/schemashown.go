package server

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode"

	"github.com/toolscout/toolscout/server/arguments"
)

// What get_tool_schema shows of a tool's schemas: what a model needs to
// call the tool and read its result, not what a validator needs. The
// tool's own schemas are unchanged: execute_tool validates against them.
//
//   - "$schema" (the dialect's URL, 12 tokens a schema) goes: it says
//     nothing about the arguments.
//   - In the output schema, "additionalProperties": false goes too: the
//     model never writes the output, and the upstream's result is
//     passed through untouched.
//
// On the memory server's open_nodes this takes its answer from 470 to
// under 400 tokens (TestSchemaAnswerBudget).

// shownInput returns the input schema as get_tool_schema shows it.
func shownInput(raw json.RawMessage) json.RawMessage { return shown(raw, false) }

// shownOutput returns the output schema as get_tool_schema shows it.
func shownOutput(raw json.RawMessage) json.RawMessage { return shown(raw, true) }

func shown(raw json.RawMessage, output bool) json.RawMessage {
	if len(raw) == 0 || !bytes.Contains(raw, []byte(`"$schema"`)) && !(output && bytes.Contains(raw, []byte(`"additionalProperties"`))) {
		return raw
	}
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	delete(v, "$schema")
	if output {
		dropClosed(v)
	}
	out, err := marshalUnescaped(v)
	if err != nil {
		return raw
	}
	return out
}

// dropClosed removes "additionalProperties": false from v and the
// schemas inside it.
func dropClosed(v any) {
	switch x := v.(type) {
	case map[string]any:
		if b, ok := x["additionalProperties"].(bool); ok && !b {
			delete(x, "additionalProperties")
		}
		for _, e := range x {
			dropClosed(e)
		}
	case []any:
		for _, e := range x {
			dropClosed(e)
		}
	}
}

// marshalUnescaped is json.Marshal without HTML escaping ("<" stays "<").
func marshalUnescaped(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// SchemaBudget is what one tool's get_tool_schema answer should stay
// within, in o200k_base tokens as `toolscout tokens` counts them (the
// design documents ask for under 400).
const SchemaBudget = 400

// schemaBudgetBytes is SchemaBudget in bytes of the answer's JSON: on
// the reference servers' tools and the built-in catalog an answer's
// content counts one token for 3.8 to 4.5 bytes of its text, so 1,480
// bytes stay under 400 tokens at the densest.
const schemaBudgetBytes = 1480

// fitBudget makes ts's answer cheaper while it is over budget, least
// needed first: a title that only repeats the tool's name, then the
// related tools' summaries (their names say most of it), then the
// related tools themselves (discover_tools finds them), then the
// examples made of the schema's own defaults and property examples
// (the schema shown beside them holds those values). The definition,
// the schemas and the other examples are never cut: a model needs them
// to call the tool, so an upstream tool whose definition alone is long
// can stay over budget.
func fitBudget(ts *ToolSchema, bare string) {
	if ts.Title != "" && sameWords(ts.Title, bare) {
		ts.Title = ""
	}
	if answerBytes(ts) <= schemaBudgetBytes {
		return
	}
	for i := range ts.RelatedTools {
		ts.RelatedTools[i].Summary = ""
	}
	if answerBytes(ts) <= schemaBudgetBytes {
		return
	}
	ts.RelatedTools = nil
	if answerBytes(ts) <= schemaBudgetBytes {
		return
	}
	ts.Examples = slices.DeleteFunc(ts.Examples, func(e arguments.Example) bool { return e.Source == "defaults" })
	if len(ts.Examples) == 0 {
		ts.Examples = nil
	}
}

// answerBytes is the size of ts's JSON.
func answerBytes(ts *ToolSchema) int {
	b, err := json.Marshal(ts)
	if err != nil {
		return 0
	}
	return len(b)
}

// sameWords reports whether title is name in other clothes: "Open Nodes"
// for open_nodes, "Get Sum" for get-sum.
func sameWords(title, name string) bool {
	norm := func(s string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(s) {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	return norm(title) == norm(name)
}
