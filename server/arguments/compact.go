package arguments

import (
	"bytes"
	"encoding/json"
	"slices"
)

// maxCompactEnum is the most values an enum keeps in a compact schema.
const maxCompactEnum = 8

// CompactSchema is an input schema as a compact tools/list shows it: the
// top-level properties with their type (the values of a short enum, an
// array's items) and which are required; no descriptions, defaults,
// formats, patterns, nested objects' properties or $defs. The required properties are always shown; the
// optional ones in the order the schema declares them, as many as the
// caller keeps (Schema's argument), so that a listing can hold each tool
// to a token budget.
type CompactSchema struct {
	required []string // every required name, in the schema's order
	props    map[string]any
	optional []string // the optional properties, in declared order
}

// Compact reads raw (an input schema) for a compact listing.
func Compact(raw json.RawMessage) CompactSchema {
	full := Decode(raw)
	c := CompactSchema{props: map[string]any{}}
	if req, ok := full["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok && !slices.Contains(c.required, name) {
				c.required = append(c.required, name)
			}
		}
	}
	props, _ := full["properties"].(map[string]any)
	for _, name := range propertyOrder(raw) {
		p, ok := props[name]
		if !ok {
			continue
		}
		ps, _ := p.(map[string]any)
		c.props[name] = compactProperty(ps)
		if !slices.Contains(c.required, name) {
			c.optional = append(c.optional, name)
		}
	}
	return c
}

// Optional is how many optional properties the schema has.
func (c CompactSchema) Optional() int { return len(c.optional) }

// Schema returns the compact schema with the required properties and the
// first n optional ones (every one when n is negative or larger).
func (c CompactSchema) Schema(n int) map[string]any {
	out := map[string]any{"type": "object"}
	if n < 0 || n > len(c.optional) {
		n = len(c.optional)
	}
	small := map[string]any{}
	for _, name := range c.required {
		if p, ok := c.props[name]; ok {
			small[name] = p
		}
	}
	for _, name := range c.optional[:n] {
		small[name] = c.props[name]
	}
	if len(small) > 0 {
		out["properties"] = small
	}
	if len(c.required) > 0 {
		req := make([]any, len(c.required))
		for i, r := range c.required {
			req[i] = r
		}
		out["required"] = req
	}
	return out
}

// compactProperty keeps of a property's schema its type, the values of a
// short enum, and an array's items, compacted the same way. Every
// property of a compact schema says its type where the whole one does,
// and every array its items, as clients check: Gemini CLI skips a tool
// with a property or items without a type, VS Code rejects one with an
// array without items. A property without a type takes the types of its
// anyOf or oneOf branches (["string","object"]); one whose type cannot
// be told so (a $ref into $defs, which a compact schema drops) is {}.
func compactProperty(ps map[string]any) map[string]any {
	out := map[string]any{}
	if typ, ok := ps["type"]; ok {
		out["type"] = typ
	} else if types := branchTypes(ps); len(types) > 0 {
		out["type"] = types
	}
	if enum, ok := ps["enum"].([]any); ok && len(enum) > 0 && len(enum) <= maxCompactEnum {
		out["enum"] = enum
	}
	if items, ok := ps["items"].(map[string]any); ok && isArray(out["type"]) {
		out["items"] = compactProperty(items)
	}
	return out
}

// isArray reports whether a schema's type is or includes "array".
func isArray(typ any) bool {
	switch t := typ.(type) {
	case string:
		return t == "array"
	case []any:
		return slices.Contains(t, any("array"))
	}
	return false
}

// branchTypes returns the types of ps's anyOf or oneOf branches, in
// order and once each, or nil when a branch has no single type.
func branchTypes(ps map[string]any) []any {
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, ok := ps[key].([]any)
		if !ok || len(branches) == 0 {
			continue
		}
		var types []any
		for _, b := range branches {
			bm, _ := b.(map[string]any)
			typ, ok := bm["type"].(string)
			if !ok {
				return nil
			}
			if !slices.Contains(types, any(typ)) {
				types = append(types, typ)
			}
		}
		return types
	}
	return nil
}

// propertyOrder returns the names of the schema's top-level properties in
// the order the JSON declares them (a decoded map has none).
func propertyOrder(raw json.RawMessage) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || len(top["properties"]) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top["properties"]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return names
		}
		name, _ := tok.(string)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return names
		}
		names = append(names, name)
	}
	return names
}
