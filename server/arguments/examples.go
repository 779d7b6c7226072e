package arguments

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

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
		if len(out) < maxExamples && args != nil && Validate(t, args) == nil {
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
		add(synthesize("", schema, 0).(map[string]any), "synthesized")
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
			args[name] = synthesize(name, p, 1)
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

// synthesize returns a plausible value of the schema's type for a
// property called name: the first enum or const value, a value its
// description gives ("e.g. Paris"), a string shaped by its format or its
// name (a repo looks like "octocat/hello-world", a path like a path), a
// number within the bounds, and objects with their required properties.
// depth bounds recursion in self-similar schemas.
func synthesize(name string, schema map[string]any, depth int) any {
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
	if v, ok := describedValue(schema, typ); ok {
		return v
	}
	switch typ {
	case "string":
		return placeholderString(name, schema)
	case "integer":
		return bounded(schema, namedNumber(name), true)
	case "number":
		return bounded(schema, namedNumber(name), false)
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
			arr = append(arr, synthesize(singular(name), items, depth+1))
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
				obj[name] = synthesize(name, p, depth+1)
			}
		}
	}
	return obj
}

func placeholderString(name string, schema map[string]any) string {
	s, ok := formatted[fmt.Sprint(schema["format"])]
	if !ok {
		s = namedString(name)
	}
	if m, ok := schema["minLength"].(float64); ok {
		for utf8.RuneCountInString(s) < int(m) {
			s += "x"
		}
	}
	if m, ok := schema["maxLength"].(float64); ok && utf8.RuneCountInString(s) > int(m) {
		s = string([]rune(s)[:int(m)])
	}
	return s
}

// formatted are values of the string formats tools use. Domains and
// addresses are of the names and ranges reserved for documentation
// (RFC 2606, RFC 5737).
var formatted = map[string]string{
	"email":     "alice@acme.test",
	"uri":       "https://acme.test/docs/start",
	"url":       "https://acme.test/docs/start",
	"hostname":  "api.acme.test",
	"ipv4":      "192.0.2.10",
	"ipv6":      "2001:db8::10",
	"date-time": "2026-03-14T09:30:00Z",
	"date":      "2026-03-14",
	"time":      "09:30:00",
	"duration":  "PT30M",
	"uuid":      "3f2c8a9e-5b1d-4c7e-9a60-2d4f8b1e7c35",
}

// namedStrings give a string property a value of its kind by the words
// of its name (the first rule that matches one wins).
var namedStrings = []struct {
	words []string
	value string
}{
	{[]string{"email", "mail"}, "alice@acme.test"},
	{[]string{"url", "uri", "link", "href", "endpoint", "website"}, "https://acme.test/docs/start"},
	{[]string{"repo", "repository"}, "octocat/hello-world"},
	{[]string{"owner", "org", "organization", "user", "username", "login", "author", "assignee"}, "octocat"},
	{[]string{"branch", "ref"}, "main"},
	{[]string{"dir", "directory", "folder"}, "/home/alice/projects"},
	{[]string{"path", "file", "filename", "filepath"}, "/home/alice/projects/notes.md"},
	{[]string{"host", "hostname", "domain"}, "api.acme.test"},
	{[]string{"ip"}, "192.0.2.10"},
	{[]string{"date", "day", "since", "until", "start", "end", "due"}, "2026-03-14"},
	{[]string{"time"}, "09:30:00"},
	{[]string{"city", "location", "place"}, "Paris"},
	{[]string{"country"}, "FR"},
	{[]string{"lang", "language", "locale"}, "en"},
	{[]string{"currency"}, "EUR"},
	{[]string{"symbol", "ticker"}, "AAPL"},
	{[]string{"phone"}, "+33 1 23 45 67 89"},
	{[]string{"channel"}, "#general"},
	{[]string{"tag", "label", "category"}, "bug"},
	{[]string{"color", "colour"}, "blue"},
	{[]string{"version"}, "1.4.2"},
	{[]string{"token", "secret", "password", "key", "apikey"}, "YOUR_API_TOKEN"},
	{[]string{"command", "cmd"}, "ls -la"},
	{[]string{"sql"}, "SELECT id, title FROM issues LIMIT 10"},
	{[]string{"code", "script", "snippet"}, "print('hello')"},
	{[]string{"regex", "pattern", "glob"}, "*.md"},
	{[]string{"query", "q", "search", "keyword", "keywords", "term"}, "quarterly sales report"},
	{[]string{"title", "subject", "heading"}, "Fix login timeout on mobile"},
	{[]string{"message", "body", "text", "content", "comment", "description", "note", "prompt", "summary", "reason"}, "Deploy finished; all checks passed."},
	{[]string{"id", "ids", "uid", "iid", "key"}, "a1b2c3d4"},
	{[]string{"timestamp", "ts"}, "1773480600.000100"},
	{[]string{"emoji", "reaction"}, "thumbsup"},
	{[]string{"bucket"}, "acme-reports"},
	{[]string{"name"}, "weekly-report"},
	{[]string{"format", "type", "kind", "mode"}, "json"},
	{[]string{"status", "state"}, "open"},
}

// namedString is a value of the kind the property's name says, or a
// neutral word. The last word of a name says its kind ("message_id" is an
// ID, "file_path" a path), so words are read from the end.
func namedString(name string) string {
	words := index.SplitIdentifier(name)
	for i := len(words) - 1; i >= 0; i-- {
		for _, r := range namedStrings {
			if slices.Contains(r.words, words[i]) {
				return r.value
			}
		}
	}
	return "sample text"
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
