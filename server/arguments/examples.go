package arguments

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/toolscout/toolscout/index"
)

// Example is an argument object for a tool, valid against its input
// schema.
type Example struct {
	// Description says in one line what the call does ("Pull an image
	// from a registry: image nginx:1.27").
	Description string         `json:"description"`
	Arguments   map[string]any `json:"arguments"`
	// Source says where it comes from: "schema" (the schema's own
	// examples), "defaults" (the properties' examples and defaults) or
	// "synthesized" (values of the kind each property's format, name and
	// description say).
	Source string `json:"source"`
}

// maxExamples is the most examples get_tool_schema returns per tool.
const maxExamples = 2

// Examples returns up to two argument objects that validate against the
// tool's input schema, each with a line saying what it does: the schema's
// own examples first, then one built from its properties' examples and
// defaults, else one synthesized from the required properties' formats,
// enums, bounds, names and descriptions (a required array holds at least
// one item). Whatever does not validate, or holds a placeholder word
// ("sample", "foo", "YOUR_..."), is left out, so an example is never
// wrong and always says something real.
func Examples(t *index.Tool) []Example {
	var schema map[string]any
	if json.Unmarshal(t.InputSchema, &schema) != nil {
		return nil
	}
	tw := index.SplitIdentifier(t.Name) // the tool's words: context for a property's kind
	var out []Example
	add := func(args map[string]any, source string) {
		if len(out) < maxExamples && args != nil && !hasPlaceholder(args) && Validate(t, args) == nil {
			out = append(out, Example{Description: describeExample(t, schema, args), Arguments: args, Source: source})
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
	if args, documented := fromDefaults(tw, schema); documented {
		add(args, "defaults")
	}
	if len(out) == 0 {
		add(synthesize(tw, "", schema, 0).(map[string]any), "synthesized")
	}
	return out
}

// fromDefaults builds an argument object from the properties' examples
// and defaults: the required properties (synthesized where they have
// neither) and the optional ones that have them. documented reports
// whether any property had one.
func fromDefaults(tw []string, schema map[string]any) (args map[string]any, documented bool) {
	props, _ := schema["properties"].(map[string]any)
	required := requiredSet(schema)
	args = map[string]any{}
	for _, name := range sortedKeys(props) {
		p, _ := props[name].(map[string]any)
		if v, ok := documentedValue(p); ok {
			args[name] = v
			documented = true
		} else if required[name] {
			args[name] = synthesize(tw, name, p, 1)
		}
	}
	return args, documented
}

// documentedValue is the property's first example, else its example,
// else its default, unless that is a placeholder or an empty string or
// array (which show nothing of what to send).
func documentedValue(p map[string]any) (any, bool) {
	var candidates []any
	if exs, ok := p["examples"].([]any); ok {
		candidates = append(candidates, exs...)
	}
	if v, ok := p["example"]; ok {
		candidates = append(candidates, v)
	}
	if v, ok := p["default"]; ok {
		candidates = append(candidates, v)
	}
	for _, v := range candidates {
		if !hasPlaceholder(v) && !emptyValue(v) {
			return v, true
		}
	}
	return nil, false
}

func emptyValue(v any) bool {
	switch v := v.(type) {
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	}
	return false
}

// synthesize returns a plausible value of the schema's type for a
// property called name: the const or first enum value, a value its
// description gives ("e.g. Paris"), a string of the kind its format, name
// or description says (stringValue: a repo looks like
// "octocat/hello-world", an image like "nginx:1.27"), a number within the
// bounds, arrays of at least one item, and objects with their required
// properties.
// tw are the words of the tool's name (stringValue). depth bounds
// recursion in self-similar schemas.
func synthesize(tw []string, name string, schema map[string]any, depth int) any {
	if v, ok := schema["const"]; ok {
		return v
	}
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		for _, v := range enum { // the first that is not a placeholder
			if !hasPlaceholder(v) {
				return v
			}
		}
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	if types, ok := schema["type"].([]any); ok && len(types) > 0 {
		typ, _ = types[0].(string)
	}
	if v, ok := describedValue(schema, typ); ok {
		return v
	}
	switch typ {
	case "string":
		return stringValue(tw, name, schema)
	case "integer":
		return bounded(schema, namedNumber(name), true)
	case "number":
		return bounded(schema, namedNumber(name), false)
	case "boolean":
		return true
	case "array":
		// minItems items, at least one: an empty array shows nothing of
		// what its items look like.
		items, _ := schema["items"].(map[string]any)
		n := 1
		if m, ok := schema["minItems"].(float64); ok && int(m) > n {
			n = int(m)
		}
		if m, ok := schema["maxItems"].(float64); ok && int(m) < n {
			n = int(m)
		}
		arr := []any{}
		for i := 0; i < n && depth < 4; i++ {
			arr = append(arr, synthesize(tw, singular(name), items, depth+1))
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
		// A nested object that requires nothing (an array's item, say)
		// shows its properties: an empty one shows nothing.
		all := depth > 0 && len(required) == 0
		parent := name
		for _, name := range sortedKeys(props) {
			if required[name] || all {
				p, _ := props[name].(map[string]any)
				obj[name] = synthesize(tw, qualified(parent, name), p, depth+1)
			}
		}
	}
	return obj
}

// namedNumber is a number of the kind the property's name says, before
// the schema's bounds.
func namedNumber(name string) float64 {
	words := index.SplitIdentifier(name)
	if slices.Contains(words, "per") { // per_page, results_per_page: a count
		return 10
	}
	for i := len(words) - 1; i >= 0; i-- {
		w := words[i]
		switch w {
		case "limit", "count", "size", "max", "top", "results", "num", "amount":
			return 10
		case "page", "offset", "index", "start", "skip":
			return 1
		case "lat", "latitude":
			return 48.8566
		case "lng", "lon", "long", "longitude":
			return 2.3522
		case "year":
			return 2026
		case "month":
			return 3
		case "port":
			return 8080
		case "timeout", "seconds", "duration", "days", "age":
			return 30
		case "id", "iid", "number", "issue", "pr":
			return 42
		}
	}
	return 1
}

// describedValue reads a value from the schema's description ("e.g.
// Paris", "for example: 'main'", "example: octocat"), when it is of the
// schema's type.
func describedValue(schema map[string]any, typ string) (any, bool) {
	desc, _ := schema["description"].(string)
	m := describedRe.FindStringSubmatch(desc)
	if m == nil {
		return nil, false
	}
	v := m[1]
	if v == "" {
		v = strings.TrimRight(m[2], ".,;:)")
	}
	if v == "" || strings.Contains(strings.ToLower(v), "example") {
		return nil, false
	}
	switch typ {
	case "string":
		return v, true
	case "integer", "number":
		if f, err := strconv.ParseFloat(v, 64); err == nil && (typ == "number" || f == math.Trunc(f)) {
			return f, true
		}
	}
	return nil, false
}

// describedRe finds "e.g. X", "for example X" and "example: X", X quoted
// or one word.
var describedRe = regexp.MustCompile("(?i)(?:e\\.g\\.[,:]?|for example[,:]?|example:)\\s*(?:[\"'`]([^\"'`]{1,60})[\"'`]|([^\\s\"'`]{1,60}))")

// qualified names a property of an object by its parent when its own
// name is one generic word: the name of an entity is an "entity name",
// the type of a relation a "relation type".
func qualified(parent, name string) string {
	switch strings.ToLower(name) {
	case "name", "id", "type", "key", "title", "value":
		if parent != "" {
			return parent + "_" + name
		}
	}
	return name
}

// singular is a plural property name's item name ("tags" → "tag").
func singular(name string) string {
	if strings.HasSuffix(name, "ies") {
		return strings.TrimSuffix(name, "ies") + "y"
	}
	return strings.TrimSuffix(name, "s")
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
