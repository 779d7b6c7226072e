package arguments

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	txt "github.com/toolscout/toolscout/internal/text"
)

// Errors in nested arguments (issue 35 item 6): an array of objects
// (memory's create_entities), an object inside an object. The validator
// says "validating root: validating /properties/entities: validating
// /properties/entities/items: required: missing properties:
// ["entityType"]"; a model corrects a call fastest from the path of the
// value in the arguments it sent, what was expected, what it sent, and
// an example of the right shape:
//
//	entities[0].entityType is required: add it to entities[0]; e.g. entities[0]: {"entityType":"person","name":"Alice Martin","observations":["Prefers morning meetings"]}
//
// The example is synthesized from the schema as get_tool_schema's
// examples are (values of the kind a property's name says), for the
// object that holds the wrong value when it fits in maxShape bytes,
// else for the value alone.

// maxShape bounds an example of the right shape in an error.
const maxShape = 200

// site is where a value sits in the arguments: its path and schema, and
// those of the object or array that holds it ("" and nil at the top).
type site struct {
	path         string
	schema       map[string]any
	parent       string
	parentSchema map[string]any
}

// child is the site of a value inside s's value: a property (name) or
// an array item (index, name "").
func (s site) child(name string, index int, schema map[string]any) site {
	p := s.path
	switch {
	case name != "" && p == "":
		p = name
	case name != "":
		p += "." + name
	default:
		p += "[" + strconv.Itoa(index) + "]"
	}
	return site{path: p, schema: schema, parent: s.path, parentSchema: s.schema}
}

// checker finds the first problem of arguments against a schema.
type checker struct {
	tw []string // the tool's name's words: the kind of example values
}

// objectError checks the object obj at s against its schema's required
// properties, additionalProperties false and each property's schema.
func (c checker) objectError(s site, obj map[string]any) string {
	props, _ := s.schema["properties"].(map[string]any)
	for _, name := range stringList(s.schema["required"]) {
		if _, ok := obj[name]; ok {
			continue
		}
		if s.path == "" {
			return fmt.Sprintf("%s is required: add it to the arguments", name)
		}
		return fmt.Sprintf("%s.%s is required: add it to %s", s.path, name, s.path) + c.shape(s.path, s.schema)
	}
	names := slices.Sorted(maps.Keys(obj))
	for _, name := range names {
		p, known := props[name].(map[string]any)
		if !known {
			if ap, ok := s.schema["additionalProperties"].(bool); ok && !ap {
				valid := strings.Join(slices.Sorted(maps.Keys(props)), ", ")
				if s.path == "" {
					return fmt.Sprintf("unknown argument %s: valid arguments are %s", txt.Quote(name, maxEcho), valid)
				}
				return fmt.Sprintf("%s has no property %s: its properties are %s", s.path, txt.Quote(name, maxEcho), valid) + c.shape(s.path, s.schema)
			}
			continue
		}
		if msg := c.valueError(s.child(name, 0, p), obj[name]); msg != "" {
			return msg
		}
	}
	return ""
}

// valueError checks the value v at s against s.schema.
func (c checker) valueError(s site, v any) string {
	p, name := s.schema, s.path
	if want := typeNames(p["type"]); len(want) > 0 && !slices.Contains(want, jsonType(v)) && !(jsonType(v) == "integer" && slices.Contains(want, "number")) {
		return fmt.Sprintf("%s must be %s; you sent %s", name, orList(article(want)), describe(v)) + c.example(s, want)
	}
	if enum, ok := p["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return jsonEqual(e, v) }) {
		opts := make([]string, len(enum))
		for i, e := range enum {
			opts[i] = fmt.Sprint(e)
		}
		return fmt.Sprintf("%s must be one of %s; you sent %s", name, strings.Join(opts, ", "), describe(v))
	}
	if msg := boundsError(name, p, v); msg != "" {
		return msg
	}
	switch x := v.(type) {
	case []any:
		if items, ok := p["items"].(map[string]any); ok {
			for i, e := range x {
				if msg := c.valueError(s.child("", i, items), e); msg != "" {
					return msg
				}
			}
		}
	case map[string]any:
		if p["properties"] != nil || p["required"] != nil {
			return c.objectError(s, x)
		}
	}
	return ""
}

// example is the example appended to a wrong value's error: nested,
// of the value that holds it (or of the value alone, if that does not
// fit); at the top, of an array or object expected.
func (c checker) example(s site, want []string) string {
	if s.parent != "" {
		if e := c.shape(s.parent, s.parentSchema); e != "" {
			return e
		}
		return c.shape(s.path, s.schema)
	}
	if slices.Contains(want, "array") || slices.Contains(want, "object") {
		return c.shape(s.path, s.schema)
	}
	return ""
}

// shape is "; e.g. PATH: JSON" with a value synthesized for schema, or
// "" when none fits in maxShape bytes.
func (c checker) shape(path string, schema map[string]any) string {
	if schema == nil {
		return ""
	}
	v := synthesize(c.tw, exampleName(path), schema, 1)
	if hasPlaceholder(v) {
		return ""
	}
	b, err := marshalCompact(v)
	if err != nil || len(b) > maxShape {
		return ""
	}
	return fmt.Sprintf("; e.g. %s: %s", path, b)
}

// exampleName is the property name that says what kind of value sits at
// path: its last property's, in the singular for an array's item
// ("entities[0]" is an entity).
func exampleName(path string) string {
	item := strings.HasSuffix(path, "]")
	if i := strings.LastIndexByte(path, '['); item && i >= 0 {
		path = path[:i]
	}
	path = strings.TrimRight(path, "]")
	if i := strings.LastIndexAny(path, ".]"); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	if item {
		return singular(path)
	}
	return path
}

// marshalCompact is json.Marshal without HTML escaping.
func marshalCompact(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// validatorStep matches each "validating /json/pointer: " of the
// validator's message.
var validatorStep = regexp.MustCompile(`validating (/[^:]*|root): `)

// plainValidatorError rewrites what the validator said about a problem
// the checker does not read (a pattern, a format, anyOf) into the path
// of the value in the arguments and the validator's last words:
// "validating root: validating /properties/tags: validating
// /properties/tags/items: pattern: ..." becomes "tags[]: pattern: ...".
func plainValidatorError(msg string) string {
	steps := validatorStep.FindAllStringSubmatchIndex(msg, -1)
	if len(steps) == 0 {
		return boundText(msg, 300)
	}
	last := steps[len(steps)-1]
	pointer, reason := msg[last[2]:last[3]], msg[last[1]:]
	path := argumentPath(pointer)
	if path == "" {
		return boundText(reason, 300)
	}
	return boundText(path+": "+reason, 300)
}

// argumentPath turns a schema's JSON pointer into the path of the values
// it checks: /properties/entities/items/properties/name is
// entities[].name.
func argumentPath(pointer string) string {
	var b strings.Builder
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties":
			if i+1 < len(parts) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(strings.NewReplacer("~1", "/", "~0", "~").Replace(parts[i+1]))
				i++
			}
		case "items", "additionalItems", "prefixItems":
			b.WriteString("[]")
		}
	}
	return b.String()
}
