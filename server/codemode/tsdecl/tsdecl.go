package tsdecl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Tool is a tool to declare.
type Tool struct {
	// Domain is the tool's domain, the namespace under tools.
	Domain string
	// Name is the tool's name inside its domain.
	Name string
	// QualifiedName is the name execute_tool and get_tool_schema know the
	// tool by; the comment names the tool by it ("" : Domain/Name).
	QualifiedName string
	// Description is the tool's description, the function's comment.
	Description string
	// InputSchema is the JSON Schema of the arguments.
	InputSchema json.RawMessage
	// OutputSchema, when set, is the JSON Schema of the structured
	// result: the type the function's promise resolves to (unknown
	// without it).
	OutputSchema json.RawMessage
	// Deprecated, when set, is why the tool is deprecated or what to use
	// instead, shown as @deprecated ("true" or "deprecated": a bare
	// @deprecated).
	Deprecated string
	// Notes are lines the comment adds after the description: warnings,
	// or why the tool does not run.
	Notes []string
	// Examples are argument objects, each shown as an @example call.
	Examples []json.RawMessage
}

// Options bound the declarations; the zero value means the defaults.
type Options struct {
	// MaxDepth bounds the nesting of a type: a schema nested deeper is
	// unknown (DefaultMaxDepth when 0).
	MaxDepth int
	// MaxBytes bounds the declarations' text: the tools whose
	// declarations would go beyond it are left out, and named in a note
	// at the end (DefaultMaxBytes when 0).
	MaxBytes int
	// Names are the names identifiers are chosen among (Idents): every
	// domain the caller sees (the keys) and every tool of each. The names
	// of the tools declared count in any case. Set it to what the
	// code-mode sandbox maps, so that an identifier declared here calls
	// the same tool there: without it, a tool left out of the
	// declarations could not claim its identifier.
	Names map[string][]string
}

const (
	// DefaultMaxDepth is Options.MaxDepth's default.
	DefaultMaxDepth = 8
	// DefaultMaxBytes is Options.MaxBytes's default.
	DefaultMaxBytes = 64 << 10
)

// maxExample bounds the bytes of an example's arguments: a longer one is
// not shown.
const maxExample = 400

// maxNamed is the most names of tools left out that the closing note
// lists.
const maxNamed = 20

// Declare returns TypeScript declarations of tools, one function a tool
// in a namespace a domain, as the code-mode sandbox calls them:
//
//	declare namespace tools.memory {
//	  /** Create multiple new entities in the knowledge graph */
//	  function create_entities(args: { ... }): Promise<{ ... }>;
//	}
//
// Domains come in the order of their first tool, tools in their order,
// properties in their schema's. A tool whose declaration does not fit in
// what Options.MaxBytes leaves is left out, and named with the others
// in a note that ends the text; omitted returns their names
// (QualifiedName, or Domain/Name). Any schema gives a declaration: what
// it says that TypeScript cannot, or nothing readable, is unknown.
func Declare(tools []Tool, opts Options) (text string, omitted []string) {
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	domainIDs, toolIDs := identifiers(tools, opts.Names)

	// Each tool that fits, in the order given (a ranking's best first),
	// then grouped by domain.
	left := opts.MaxBytes
	decls := map[string][]string{}
	said := map[string]bool{} // property comments written so far (docKey)
	var domains []string
	for _, t := range tools {
		head := ""
		if decls[t.Domain] == nil {
			head = namespaceHead(t.Domain, domainIDs[t.Domain])
		}
		need := len(head) + len(namespaceTail)
		if need > left {
			omitted = append(omitted, label(t))
			continue
		}
		d, added, ok := declareTool(t, domainIDs[t.Domain], toolIDs[t.Domain][t.Name], opts.MaxDepth, left-need, said)
		if !ok {
			omitted = append(omitted, label(t))
			continue
		}
		for _, k := range added {
			said[k] = true
		}
		if decls[t.Domain] == nil {
			domains = append(domains, t.Domain)
			left -= need
		}
		decls[t.Domain] = append(decls[t.Domain], d)
		left -= len(d)
	}
	var b strings.Builder
	for i, d := range domains {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(namespaceHead(d, domainIDs[d]))
		for _, decl := range decls[d] {
			b.WriteString(decl)
		}
		b.WriteString(namespaceTail)
	}
	if len(omitted) > 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(omittedNote(omitted, opts.MaxBytes))
	}
	return b.String(), omitted
}

// identifiers returns the identifier of each domain and, per domain, of
// each tool name, chosen among the names of tools and names.
func identifiers(tools []Tool, names map[string][]string) (domains map[string]string, byDomain map[string]map[string]string) {
	all := map[string][]string{}
	for d, ns := range names {
		all[d] = append(all[d], ns...)
	}
	for _, t := range tools {
		all[t.Domain] = append(all[t.Domain], t.Name)
	}
	var ds []string
	byDomain = map[string]map[string]string{}
	for d, ns := range all {
		ds = append(ds, d)
		byDomain[d] = Idents(ns)
	}
	return Idents(ds), byDomain
}

// namespaceHead opens a domain's namespace; a comment names a domain
// whose identifier is not its name.
func namespaceHead(domain, id string) string {
	head := "declare namespace tools." + id + " {\n"
	if id != domain {
		head = "/** domain " + quote(domain) + " */\n" + head
	}
	return head
}

const namespaceTail = "}\n"

// label names t in the note on tools left out and in its comment, on
// one line.
func label(t Tool) string {
	l := t.QualifiedName
	if l == "" {
		l = t.Domain + "/" + t.Name
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, l)
}

// omittedNote says which tools were left out, naming up to maxNamed.
func omittedNote(omitted []string, maxBytes int) string {
	named := omitted[:min(len(omitted), maxNamed)]
	s := fmt.Sprintf("// %d tools left out to stay within %d bytes: %s", len(omitted), maxBytes, strings.Join(named, ", "))
	if len(omitted) == 1 {
		s = fmt.Sprintf("// 1 tool left out to stay within %d bytes: %s", maxBytes, named[0])
	}
	if len(omitted) > len(named) {
		s += fmt.Sprintf(" and %d more", len(omitted)-len(named))
	}
	return s + "\n"
}

// declareTool returns t's function declaration, indented for its
// namespace, or false when it is longer than limit bytes. A property's
// comment that said has (an earlier tool's, in the same answer) is
// left out, and so one this declaration has already written: the
// output type of memory's create_entities repeats its input's, and its
// neighbours the same entities again. added returns the comments it
// wrote, for said once the declaration is kept.
func declareTool(t Tool, domainID, id string, maxDepth, limit int, said map[string]bool) (decl string, added []string, ok bool) {
	p := &printer{limit: limit}
	const ind = "  "
	p.comment(toolDoc(t, domainID, id), ind)

	mine := map[string]bool{}
	once := func(typ *tsType) *tsType {
		sayOnce(typ, func(k string) bool {
			if said[k] || mine[k] {
				return false
			}
			mine[k] = true
			added = append(added, k)
			return true
		})
		return typ
	}
	args := once(typeOf(t.InputSchema, maxDepth))
	p.write(ind, "function ", id, "(args")
	if optionalArgs(args) {
		p.write("?")
	}
	p.write(": ")
	p.typ(args, ind)
	p.write("): Promise<")
	if len(bytes.TrimSpace(t.OutputSchema)) == 0 {
		p.write("unknown")
	} else {
		p.typ(once(typeOf(t.OutputSchema, maxDepth)), ind)
	}
	p.write(">;\n")
	return p.b.String(), added, !p.over
}

// sayOnce clears, in the order the printer writes them, the comments of
// t's properties that first refuses (first reports whether a comment,
// by docKey, is written for the first time). t is a tree of its own,
// fresh from typeOf: the singletons it shares have no properties.
func sayOnce(t *tsType, first func(key string) bool) {
	if t == nil {
		return
	}
	switch t.kind {
	case kArray:
		sayOnce(t.elem, first)
	case kTuple:
		for _, e := range t.elems {
			sayOnce(e, first)
		}
		sayOnce(t.elem, first)
	case kUnion, kInter:
		for _, e := range t.elems {
			sayOnce(e, first)
		}
	case kObject:
		for i := range t.props {
			pr := &t.props[i]
			if pr.doc != "" && !first(docKey(pr.key, pr.doc)) {
				pr.doc = ""
			}
			sayOnce(pr.t, first)
		}
		sayOnce(t.index, first)
	}
}

// docKey names a property's comment: the same text on a property of the
// same name is said once.
func docKey(key, doc string) string { return key + "\x00" + doc }

// typeOf returns the type of the schema raw.
func typeOf(raw json.RawMessage, maxDepth int) *tsType {
	root, err := parse(raw)
	if err != nil {
		return tUnknown
	}
	c := &converter{root: root, maxDepth: maxDepth}
	return c.convert(root, 0)
}

// optionalArgs reports whether a call may leave out the arguments: they
// are an object without required properties.
func optionalArgs(t *tsType) bool {
	if isUnknown(t) {
		return true
	}
	if t.kind != kObject {
		return false
	}
	for _, p := range t.props {
		if !p.optional {
			return false
		}
	}
	return true
}

// toolDoc returns the text of t's comment: its description, its name,
// its notes, @deprecated and its examples.
func toolDoc(t Tool, domainID, id string) string {
	var b strings.Builder
	if d := strings.TrimSpace(t.Description); d != "" {
		b.WriteString(d)
		b.WriteByte('\n')
	}
	if l := label(t); l != domainID+"__"+id {
		// Said only when the call does not say it: a name made an
		// identifier, or a qualified name of another form.
		fmt.Fprintf(&b, "(tool: %s)\n", l)
	}
	for _, n := range t.Notes {
		b.WriteString(strings.TrimSpace(n))
		b.WriteByte('\n')
	}
	switch dep := strings.TrimSpace(t.Deprecated); strings.ToLower(dep) {
	case "":
	case "true", "deprecated":
		b.WriteString("@deprecated\n")
	default:
		b.WriteString("@deprecated " + dep + "\n")
	}
	for _, ex := range t.Examples {
		var c bytes.Buffer
		if json.Compact(&c, ex) != nil || c.Len() > maxExample {
			continue
		}
		fmt.Fprintf(&b, "@example\nawait tools.%s.%s(%s)\n", domainID, id, c.String())
	}
	return b.String()
}
