package tsdecl

import "strings"

// tsType is a TypeScript type made from a schema, printed by print.go.
type tsType struct {
	kind  typeKind
	name  string    // kName: the type's name; kLiteral: the literal's text
	elem  *tsType   // kArray: the element type; kTuple: the rest's element type, if any
	elems []*tsType // kTuple, kUnion, kInter: the members
	props []prop    // kObject: the properties, in the schema's order
	index *tsType   // kObject: the index signature's type, if any
}

// typeKind says what a tsType is.
type typeKind int

const (
	kName    typeKind = iota // string, number, boolean, null, unknown, never
	kLiteral                 // "a", 1, true
	kArray
	kTuple
	kObject
	kUnion
	kInter
)

// prop is a property of an object type.
type prop struct {
	key      string
	t        *tsType
	optional bool
	doc      string // the comment's text: description and default
}

var (
	tUnknown = &tsType{kind: kName, name: "unknown"}
	tNever   = &tsType{kind: kName, name: "never"}
)

func named(n string) *tsType { return &tsType{kind: kName, name: n} }

// converter turns the schemas of one document (a tool's input or output
// schema) into types, bounded: nesting deeper than maxDepth, the
// schemas met past maxNodes, and a $ref met again inside itself all
// become unknown, so that any document gives a type in time linear in
// its size.
type converter struct {
	root     *value
	maxDepth int
	nodes    int             // schemas converted so far
	refs     map[string]bool // $refs being expanded
}

// maxNodes bounds the schemas converted for one document: a $ref used
// many times is expanded each time, so that without it a few
// definitions could expand to an exponential number of types.
const maxNodes = 2000

// typeKeywords are the keywords that say what a value is; a schema
// without any (only constraints, or a description) says nothing a type
// can show.
var typeKeywords = []string{"type", "enum", "const", "$ref", "properties", "additionalProperties",
	"patternProperties", "items", "prefixItems", "anyOf", "oneOf", "allOf", "required"}

// shapes reports whether s has a keyword that shapes its type.
func shapes(s *value) bool {
	if s == nil || s.kind != 'o' {
		return s != nil && s.kind == 'b' && !s.b // false: never
	}
	for _, k := range typeKeywords {
		if s.get(k) != nil {
			return true
		}
	}
	return false
}

// convert returns the type of schema s, nested depth deep.
func (c *converter) convert(s *value, depth int) *tsType {
	if s == nil {
		return tUnknown
	}
	if s.kind == 'b' && !s.b {
		return tNever
	}
	if s.kind != 'o' || depth > c.maxDepth || c.nodes >= maxNodes {
		return tUnknown
	}
	c.nodes++
	if ref, ok := s.str("$ref"); ok {
		return c.ref(ref, depth)
	}
	var t *tsType
	switch {
	case s.get("const") != nil:
		t = literal(s.get("const"))
	case s.get("enum") != nil:
		t = c.enum(s)
	}
	if t == nil {
		t = c.byType(s, depth)
	}
	// Combinations: what the schema says itself and what its anyOf or
	// oneOf members (a union) and allOf members (an intersection) say.
	var parts []*tsType
	if t != nil {
		parts = append(parts, t)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if u := c.members(s.get(k), depth); len(u) > 0 {
			parts = append(parts, union(u))
		}
	}
	if all := c.members(s.get("allOf"), depth); len(all) > 0 {
		parts = append(parts, all...)
	}
	if len(parts) == 0 {
		return tUnknown
	}
	t = intersection(parts)
	if s.is("nullable", true) {
		t = union([]*tsType{t, named("null")})
	}
	return t
}

// ref returns the type a local $ref points at; other references, and
// one met again while it is expanded, are unknown.
func (c *converter) ref(ref string, depth int) *tsType {
	target := pointer(c.root, ref)
	if target == nil || c.refs[ref] {
		return tUnknown
	}
	if c.refs == nil {
		c.refs = map[string]bool{}
	}
	c.refs[ref] = true
	defer delete(c.refs, ref)
	return c.convert(target, depth+1)
}

// members returns the types of the schemas of an anyOf, oneOf or allOf
// array, leaving out those that shape nothing ({"required": ["a"]} is
// a constraint, not a type).
func (c *converter) members(arr *value, depth int) []*tsType {
	if arr == nil || arr.kind != 'a' {
		return nil
	}
	var out []*tsType
	for _, m := range arr.vals {
		if shapes(m) || m.kind != 'o' {
			out = append(out, c.convert(m, depth+1))
		}
	}
	return out
}

// enum returns the union of an enum's literals, or nil when one of them
// is not a literal a type can say (an object or an array).
func (c *converter) enum(s *value) *tsType {
	e := s.get("enum")
	if e.kind != 'a' {
		return nil
	}
	var lits []*tsType
	for _, v := range e.vals {
		l := literal(v)
		if l == nil {
			return nil
		}
		lits = append(lits, l)
	}
	return union(lits)
}

// literal returns the literal type of v, or nil for an object or array.
func literal(v *value) *tsType {
	switch v.kind {
	case 's':
		return &tsType{kind: kLiteral, name: quote(v.s)}
	case 'n', 'b', 'z':
		var b strings.Builder
		v.writeJSON(&b)
		if v.kind == 'z' {
			return named("null")
		}
		return &tsType{kind: kLiteral, name: b.String()}
	}
	return nil
}

// byType returns the type that s's "type" says, or that its keywords
// imply when it has none (properties: an object; items: an array); nil
// when nothing says it.
func (c *converter) byType(s *value, depth int) *tsType {
	var types []string
	switch ty := s.get("type"); {
	case ty == nil:
		switch {
		case s.get("properties") != nil || s.get("additionalProperties") != nil || s.get("patternProperties") != nil || s.get("required") != nil:
			types = []string{"object"}
		case s.get("items") != nil || s.get("prefixItems") != nil:
			types = []string{"array"}
		default:
			return nil
		}
	case ty.kind == 's':
		types = []string{ty.s}
	case ty.kind == 'a':
		for _, e := range ty.vals {
			if e.kind != 's' {
				return tUnknown
			}
			types = append(types, e.s)
		}
	default:
		return tUnknown
	}
	var out []*tsType
	for _, ty := range types {
		switch ty {
		case "string", "number", "boolean", "null":
			out = append(out, named(ty))
		case "integer":
			out = append(out, named("number"))
		case "object":
			out = append(out, c.object(s, depth))
		case "array":
			out = append(out, c.array(s, depth))
		default:
			out = append(out, tUnknown)
		}
	}
	return union(out)
}

// object returns the object type of s: its properties in order, those
// in required without a "?", the required ones it does not describe as
// unknown, and an index signature for additionalProperties and
// patternProperties, or for an object that says nothing of its
// properties ({"type": "object"}: any object).
func (c *converter) object(s *value, depth int) *tsType {
	t := &tsType{kind: kObject}
	var required []string
	isRequired := map[string]bool{}
	if r := s.get("required"); r != nil && r.kind == 'a' {
		for _, e := range r.vals {
			if e.kind == 's' && !isRequired[e.s] {
				required = append(required, e.s)
				isRequired[e.s] = true
			}
		}
	}
	seen := map[string]bool{}
	if ps := s.get("properties"); ps != nil && ps.kind == 'o' {
		for _, k := range ps.keys {
			if seen[k] {
				continue // a repeated key: its last schema (get) counts
			}
			seen[k] = true
			p := ps.get(k)
			t.props = append(t.props, prop{key: k, t: c.convert(p, depth+1), optional: !isRequired[k], doc: c.doc(p)})
		}
	}
	for _, k := range required {
		if !seen[k] {
			seen[k] = true
			t.props = append(t.props, prop{key: k, t: tUnknown})
		}
	}
	var index []*tsType
	if pp := s.get("patternProperties"); pp != nil && pp.kind == 'o' {
		for _, v := range pp.vals {
			index = append(index, c.convert(v, depth+1))
		}
	}
	switch ap := s.get("additionalProperties"); {
	case ap == nil && s.get("properties") != nil:
		// "properties": {} says there are none: {} (which TypeScript
		// reads as any object) is all there is to say.
	case ap == nil || ap.kind == 'b' && ap.b:
		if len(t.props) == 0 && len(index) == 0 {
			index = append(index, tUnknown) // any object
		}
	case ap.kind == 'o':
		index = append(index, c.convert(ap, depth+1))
	}
	if len(index) > 0 {
		t.index = union(index)
		if t.index == tNever {
			t.index = nil
		}
	}
	return t
}

// array returns the array type of s: T[] for items T, a tuple for
// prefixItems (or an items array, before 2020-12) with the rest typed
// by items (additionalItems) unless it is false.
func (c *converter) array(s *value, depth int) *tsType {
	items := s.get("items")
	prefix := s.get("prefixItems")
	rest := items
	if items != nil && items.kind == 'a' {
		prefix, rest = items, s.get("additionalItems")
	}
	if prefix == nil || prefix.kind != 'a' {
		return &tsType{kind: kArray, elem: c.convert(orTrue(items), depth+1)}
	}
	t := &tsType{kind: kTuple}
	for _, e := range prefix.vals {
		t.elems = append(t.elems, c.convert(e, depth+1))
	}
	if r := c.convert(orTrue(rest), depth+1); r != tNever {
		t.elem = r
	}
	return t
}

// orTrue is s, or the schema true (anything) when s is nil.
func orTrue(s *value) *value {
	if s == nil {
		return &value{kind: 'b', b: true}
	}
	return s
}

// doc returns what a property's comment says: its description (the
// target's, through a $ref, when it has none) and its default.
func (c *converter) doc(s *value) string {
	if s == nil || s.kind != 'o' {
		return ""
	}
	desc, ok := s.str("description")
	if !ok {
		if ref, isRef := s.str("$ref"); isRef {
			desc, _ = pointer(c.root, ref).str("description")
		}
	}
	desc = strings.TrimSpace(desc)
	if d := s.get("default"); d != nil {
		var b strings.Builder
		d.writeJSON(&b)
		def := b.String()
		if len(def) > maxDefault {
			def = def[:maxDefault] + "…"
		}
		if desc != "" {
			desc += "\n"
		}
		desc += "@default " + def
	}
	return desc
}

// maxDefault bounds the bytes of a default value a comment shows.
const maxDefault = 200

// union returns the union of ts: nested unions flattened, repeated
// members once, never left out; unknown when a member is.
func union(ts []*tsType) *tsType {
	var out []*tsType
	seen := map[string]bool{}
	for _, t := range ts {
		members := []*tsType{t}
		if t.kind == kUnion {
			members = t.elems
		}
		for _, m := range members {
			if m == tUnknown || m.kind == kName && m.name == "unknown" {
				return tUnknown
			}
			if m.kind == kName && m.name == "never" {
				continue
			}
			if k := simpleKey(m); k != "" {
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			out = append(out, m)
		}
	}
	switch len(out) {
	case 0:
		return tNever
	case 1:
		return out[0]
	}
	return &tsType{kind: kUnion, elems: out}
}

// intersection returns the intersection of ts: unknown members add
// nothing; never when a member is never.
func intersection(ts []*tsType) *tsType {
	var out []*tsType
	for _, t := range ts {
		members := []*tsType{t}
		if t.kind == kInter {
			members = t.elems
		}
		for _, m := range members {
			switch {
			case m.kind == kName && m.name == "unknown":
				continue
			case m.kind == kName && m.name == "never":
				return tNever
			}
			out = append(out, m)
		}
	}
	switch len(out) {
	case 0:
		return tUnknown
	case 1:
		return out[0]
	}
	return &tsType{kind: kInter, elems: out}
}

// simpleKey identifies a name or literal type, for removing repeats
// from a union; "" for other types.
func simpleKey(t *tsType) string {
	if t.kind == kName || t.kind == kLiteral {
		return t.name
	}
	return ""
}
