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
	"time"

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
func Examples(t *index.Tool) []Example { return ExamplesWithin(t, nil) }

// ExamplesWithin is Examples for a tool whose server may touch only the
// folders roots (a filesystem server's allowed directories): the paths
// of its examples are inside the first of them.
func ExamplesWithin(t *index.Tool, roots []string) []Example {
	var schema map[string]any
	if json.Unmarshal(t.InputSchema(), &schema) != nil {
		return nil
	}
	tw := index.SplitIdentifier(t.Name) // the tool's words: context for a property's kind
	var out []Example
	add := func(args map[string]any, source string) {
		if len(roots) > 0 && source != "schema" {
			args, _ = within(args, roots[0]).(map[string]any)
		}
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
		if _, ok := items["description"]; !ok && items != nil {
			// Items said only by the array ("Files with path and
			// content") are read from its description.
			withDesc := make(map[string]any, len(items)+1)
			for k, v := range items {
				withDesc[k] = v
			}
			withDesc["description"] = schema["description"]
			items = withDesc
		}
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
		if len(obj) == 0 && depth > 0 {
			openObject(tw, parent, schema, obj, depth)
		}
		orderRanges(obj, props)
		distinctSiblings(obj, props)
	}
	return obj
}

// openObject fills obj, a value of an object schema that names no
// property to fill, so that it shows content: the properties its
// description names ("Edits with oldText and newText"), else one entry
// of its additionalProperties' schema (a string when it has none), under
// a key the description or the property's name suggests.
func openObject(tw []string, name string, schema map[string]any, obj map[string]any, depth int) {
	if ap, ok := schema["additionalProperties"].(bool); ok && !ap {
		return
	}
	desc, _ := schema["description"].(string)
	if m := withPropsRe.FindStringSubmatch(desc); m != nil {
		var names []string
		for _, k := range listedNames.FindAllString(m[1], -1) {
			if k != "and" && k != "or" {
				names = append(names, k)
			}
		}
		if !slices.ContainsFunc(names, func(w string) bool { return notNames[strings.ToLower(w)] }) {
			for _, k := range names {
				obj[k] = synthesize(tw, qualified(name, k), map[string]any{"type": "string"}, depth+1)
			}
			return
		}
	}
	vs, _ := schema["additionalProperties"].(map[string]any)
	if vs == nil {
		vs = map[string]any{"type": "string"}
	}
	obj["name"] = synthesize(tw, qualified(singular(name), "name"), vs, depth+1)
}

// withPropsRe finds the properties a description of an object lists
// after "with": "with path and content", "with oldText and newText".
var withPropsRe = regexp.MustCompile(`\bwith\s+((?:[A-Za-z][A-Za-z0-9_]*)(?:\s*(?:,|and|or)\s*[A-Za-z][A-Za-z0-9_]*){0,5})`)

var listedNames = regexp.MustCompile(`[A-Za-z][A-Za-z0-9_]*`)

// notNames are words that show a description's "with" is followed by a
// phrase, not by a list of names ("with the given title").
var notNames = map[string]bool{"the": true, "a": true, "an": true, "its": true, "their": true, "his": true, "her": true,
	"given": true, "each": true, "all": true, "any": true, "some": true, "this": true, "that": true, "these": true,
	"those": true, "one": true, "no": true, "optional": true, "your": true, "my": true}

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

// startWords and endWords name the two ends of a range in a property's
// name: time_min and time_max, start and end, since and until.
var (
	startWords = []string{"start", "begin", "from", "since", "min", "earliest", "first", "after"}
	endWords   = []string{"end", "finish", "to", "until", "max", "latest", "last", "before", "stop"}
)

// orderRanges makes the end of each range of obj (a property whose name
// is another's with an end word for its start word: end of start,
// time_max of time_min) come after its start when the two were given the
// same date, time or number: an hour later, a day later, one more.
func orderRanges(obj map[string]any, props map[string]any) {
	for _, endKey := range sortedKeys(obj) {
		words := index.SplitIdentifier(endKey)
		for i, w := range words {
			if !slices.Contains(endWords, w) {
				continue
			}
			for _, sw := range startWords {
				startWords := slices.Clone(words)
				startWords[i] = sw
				startKey, ok := keyWithWords(obj, startWords)
				if !ok || startKey == endKey || fmt.Sprint(obj[startKey]) != fmt.Sprint(obj[endKey]) {
					continue
				}
				if later, ok := laterValue(obj[endKey]); ok {
					p, _ := props[endKey].(map[string]any)
					if _, fixed := p["enum"]; !fixed {
						obj[endKey] = later
					}
				}
			}
		}
	}
}

// keyWithWords returns the key of obj whose words are words.
func keyWithWords(obj map[string]any, words []string) (string, bool) {
	for k := range obj {
		if slices.Equal(index.SplitIdentifier(k), words) {
			return k, true
		}
	}
	return "", false
}

// laterValue is a date-time an hour later, a date a day later, a time an
// hour later, a number one more.
func laterValue(v any) (any, bool) {
	switch v := v.(type) {
	case float64:
		return v + 1, true
	case int:
		return v + 1, true
	case string:
		for _, layout := range []string{time.RFC3339, time.DateOnly, time.TimeOnly} {
			if t, err := time.Parse(layout, v); err == nil {
				if layout == time.DateOnly {
					return t.AddDate(0, 0, 1).Format(layout), true
				}
				return t.Add(time.Hour).Format(layout), true
			}
		}
	}
	return nil, false
}

// otherValues are second values of the kinds valueRules give, for a
// sibling property that would otherwise repeat one (oldText and newText
// of an edit, two ids).
var otherValues = map[string]string{
	"Deploy finished; all checks passed.": "Deploy finished; 2 checks failed.",
	filePath:                              "/home/alice/projects/todo.md",
	"/home/alice/projects":                "/home/alice/projects/docs",
	"a1b2c3d4":                            "e5f6a7b8",
	"weekly-report":                       "monthly-report",
	"Fix login timeout on mobile":         "Update the onboarding guide",
	"Paris":                               "Lyon",
	"octocat":                             "hubot",
	"main":                                "develop",
	"blue":                                "green",
	"Acme Corp":                           "Globex Inc",
	"Alice Martin":                        "Bob Chen",
	"alice@acme.io":                       "bob@acme.io",
	"quarterly sales report":              "open support tickets",
	"bug":                                 "feature",
	"json":                                "csv",
	"PROJ-123":                            "PROJ-124",
}

// distinctSiblings gives a string property of obj that repeats the value
// of a sibling before it (in name order) a second value of the same kind
// (otherValues), unless its schema fixes the value (const, enum, format,
// pattern).
func distinctSiblings(obj map[string]any, props map[string]any) {
	seen := map[string]bool{}
	for _, k := range sortedKeys(obj) {
		s, ok := obj[k].(string)
		if !ok {
			continue
		}
		if seen[s] {
			p, _ := props[k].(map[string]any)
			_, c := p["const"]
			_, e := p["enum"]
			_, f := p["format"]
			_, pt := p["pattern"]
			if other, ok := otherValues[s]; ok && !c && !e && !f && !pt {
				obj[k] = other
				s = other
			}
		}
		seen[s] = true
	}
}

// examplesHome is the folder the synthesized paths are in (valueRules,
// contextRules, otherValues): /home/alice/projects/notes.md and the like.
const (
	examplesHome     = "/home/alice/"
	examplesProjects = "/home/alice/projects"
)

// within returns v with each synthesized path moved into root:
// /home/alice/projects and what is under it to root and under it, the
// rest of /home/alice/ under root ("/home/alice/archive/notes.md" to
// root/archive/notes.md).
func within(v any, root string) any {
	root = strings.TrimRight(root, "/\\")
	switch v := v.(type) {
	case string:
		switch {
		case v == examplesProjects || strings.HasPrefix(v, examplesProjects+"/"):
			return root + strings.TrimPrefix(v, examplesProjects)
		case strings.HasPrefix(v, examplesHome):
			return root + "/" + strings.TrimPrefix(v, examplesHome)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = within(x, root)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = within(x, root)
		}
		return out
	}
	return v
}
