package server

import (
	"encoding/json"
	"sort"

	"github.com/toolscout/toolscout/index"
)

// Example is an argument object for a tool, valid against its input
// schema.
type Example struct {
	Arguments map[string]any `json:"arguments"`
	// Source says where it comes from: "schema" (the schema's own
	// examples), "defaults" (the properties' examples and defaults) or
	// "synthesized" (built from the types, with placeholder values).
	Source string `json:"source"`
}

// maxExamples is the most examples get_tool_schema returns per tool.
const maxExamples = 2

// Examples returns up to two argument objects that validate against the
// tool's input schema: the schema's own examples first, then one built
// from its properties' examples and defaults, else one synthesized from
// the types of the required properties. Whatever does not validate is left
// out, so an example is never wrong.
func Examples(t *index.Tool) []Example {
	var schema map[string]any
	if json.Unmarshal(t.InputSchema, &schema) != nil {
		return nil
	}
	var out []Example
	add := func(args map[string]any, source string) {
		if len(out) < maxExamples && args != nil && ValidateArguments(t, args) == nil {
			out = append(out, Example{Arguments: args, Source: source})
		}
	}
	if exs, ok := schema["examples"].([]any); ok {
		for _, e := range exs {
			if m, ok := e.(map[string]any); ok {
				add(m, "schema")
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	if args, documented := fromDefaults(schema); documented {
		add(args, "defaults")
	}
	if len(out) == 0 {
		add(synthesize(schema, 0).(map[string]any), "synthesized")
	}
	return out
}

// fromDefaults builds an argument object from the properties' examples
// and defaults: the required properties (synthesized where they have
// neither) and the optional ones that have them. documented reports
// whether any property had one.
func fromDefaults(schema map[string]any) (args map[string]any, documented bool) {
	props, _ := schema["properties"].(map[string]any)
	required := requiredSet(schema)
	args = map[string]any{}
	for _, name := range sortedKeys(props) {
		p, _ := props[name].(map[string]any)
		if v, ok := documentedValue(p); ok {
			args[name] = v
			documented = true
		} else if required[name] {
			args[name] = synthesize(p, 1)
		}
	}
	return args, documented
}

func documentedValue(p map[string]any) (any, bool) {
	if exs, ok := p["examples"].([]any); ok && len(exs) > 0 {
		return exs[0], true
	}
	if v, ok := p["example"]; ok {
		return v, true
	}
	if v, ok := p["default"]; ok {
		return v, true
	}
	return nil, false
}

// synthesize returns a placeholder value of the schema's type: the first
// enum or const value, a format-shaped or named string, a number within
// the bounds, and objects with their required properties. depth bounds
// recursion in self-similar schemas.
func synthesize(schema map[string]any, depth int) any {
	if v, ok := schema["const"]; ok {
		return v
	}
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	if types, ok := schema["type"].([]any); ok && len(types) > 0 {
		typ, _ = types[0].(string)
	}
	switch typ {
	case "string":
		return placeholderString(schema)
	case "integer":
		return bounded(schema, 1, true)
	case "number":
		return bounded(schema, 1, false)
	case "boolean":
		return true
	case "array":
		items, _ := schema["items"].(map[string]any)
		n := 0
		if m, ok := schema["minItems"].(float64); ok {
			n = int(m)
		}
		arr := []any{}
		for i := 0; i < n && depth < 4; i++ {
			arr = append(arr, synthesize(items, depth+1))
		}
		return arr
	case "null":
		return nil
	}
	// An object, or a schema without a type.
	obj := map[string]any{}
	if depth < 4 {
		props, _ := schema["properties"].(map[string]any)
		required := requiredSet(schema)
		for _, name := range sortedKeys(props) {
			if required[name] {
				p, _ := props[name].(map[string]any)
				obj[name] = synthesize(p, depth+1)
			}
		}
	}
	return obj
}

func placeholderString(schema map[string]any) string {
	s := ""
	switch schema["format"] {
	case "email":
		s = "user@example.com"
	case "uri", "url":
		s = "https://example.com"
	case "date-time":
		s = "2026-01-01T00:00:00Z"
	case "date":
		s = "2026-01-01"
	case "time":
		s = "12:00:00"
	case "uuid":
		s = "00000000-0000-4000-8000-000000000000"
	default:
		s = "example"
	}
	if m, ok := schema["minLength"].(float64); ok {
		for len(s) < int(m) {
			s += "x"
		}
	}
	if m, ok := schema["maxLength"].(float64); ok && len(s) > int(m) {
		s = s[:int(m)]
	}
	return s
}

func bounded(schema map[string]any, v float64, integer bool) any {
	if m, ok := schema["minimum"].(float64); ok && v < m {
		v = m
	}
	if m, ok := schema["exclusiveMinimum"].(float64); ok && v <= m {
		v = m + 1
	}
	if m, ok := schema["maximum"].(float64); ok && v > m {
		v = m
	}
	if integer {
		return int(v)
	}
	return v
}

func requiredSet(schema map[string]any) map[string]bool {
	out := map[string]bool{}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				out[s] = true
			}
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// RelatedTool is a tool near another: same domain, nearest by the index.
type RelatedTool struct {
	Name    string `json:"name"`
	Summary string `json:"summary,omitempty"`
	// Warnings are the tool's poisoning flags, as discover_tools gives
	// them: a flagged tool is not offered as a harmless alternative.
	Warnings []string `json:"warnings,omitempty"`
}

// maxRelated is the most related tools get_tool_schema returns per tool.
const maxRelated = 3

func relatedEntries(tools []*index.Tool) []RelatedTool {
	out := make([]RelatedTool, 0, len(tools))
	for _, t := range tools {
		out = append(out, RelatedTool{Name: t.QualifiedName, Summary: t.Summary, Warnings: t.Warnings})
	}
	return out
}
