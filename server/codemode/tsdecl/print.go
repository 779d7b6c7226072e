package tsdecl

import (
	"strings"
)

// printer writes TypeScript text up to a limit: past it, writes are
// dropped and over is set, so that a type expanded from a large
// document costs no more than the limit to print.
type printer struct {
	b     strings.Builder
	limit int
	over  bool
}

func (p *printer) write(ss ...string) {
	for _, s := range ss {
		if p.over {
			return
		}
		if p.b.Len()+len(s) > p.limit {
			p.over = true
			return
		}
		p.b.WriteString(s)
	}
}

// inlineWidth is the longest object type printed on one line; an object
// type with comments inside is never printed on one line.
const inlineWidth = 72

// typ prints t, its lines after the first indented by ind.
func (p *printer) typ(t *tsType, ind string) {
	if p.over {
		return
	}
	if s, ok := inline(t, inlineWidth); ok {
		p.write(s)
		return
	}
	switch t.kind {
	case kName, kLiteral:
		p.write(t.name)
	case kArray:
		if simple(t.elem) {
			p.typ(t.elem, ind)
			p.write("[]")
			return
		}
		p.write("Array<")
		p.typ(t.elem, ind)
		p.write(">")
	case kTuple:
		p.write("[")
		for i, e := range t.elems {
			if i > 0 {
				p.write(", ")
			}
			p.typ(e, ind)
		}
		if t.elem != nil {
			if len(t.elems) > 0 {
				p.write(", ")
			}
			p.write("...")
			p.typ(&tsType{kind: kArray, elem: t.elem}, ind)
		}
		p.write("]")
	case kUnion, kInter:
		sep := " | "
		if t.kind == kInter {
			sep = " & "
		}
		for i, e := range t.elems {
			if i > 0 {
				p.write(sep)
			}
			paren := e.kind == kUnion && t.kind == kInter
			if paren {
				p.write("(")
			}
			p.typ(e, ind)
			if paren {
				p.write(")")
			}
		}
	case kObject:
		p.object(t, ind)
	}
}

// object prints an object type, one member a line. An index signature
// whose type is not unknown goes into an intersection of its own, since
// TypeScript requires every property of an object type to fit its
// index signature.
func (p *printer) object(t *tsType, ind string) {
	in := ind + "  "
	p.write("{\n")
	for _, pr := range t.props {
		if p.over {
			return
		}
		p.comment(pr.doc, in)
		p.write(in, propertyKey(pr.key))
		if pr.optional {
			p.write("?")
		}
		p.write(": ")
		p.typ(pr.t, in)
		p.write(";\n")
	}
	separate := t.index != nil && len(t.props) > 0 && !isUnknown(t.index)
	if t.index != nil && !separate {
		p.write(in, "[key: string]: ")
		p.typ(t.index, in)
		p.write(";\n")
	}
	p.write(ind, "}")
	if separate {
		p.write(" & ")
		p.typ(&tsType{kind: kObject, index: t.index}, ind)
	}
}

// comment prints text as a /** */ comment at ind: on one line if it has
// one, else one line of the comment for each.
func (p *printer) comment(text, ind string) {
	if text == "" || p.over {
		return
	}
	lines := commentLines(text)
	if len(lines) == 1 {
		p.write(ind, "/** ", lines[0], " */\n")
		return
	}
	p.write(ind, "/**\n")
	for _, l := range lines {
		if l == "" {
			p.write(ind, " *\n")
		} else {
			p.write(ind, " * ", l, "\n")
		}
	}
	p.write(ind, " */\n")
}

// commentLines splits text into the lines of a comment: "*/" cannot end
// it early, control characters go, and blank lines at the ends too.
func commentLines(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r' || r == '\u2028' || r == '\u2029':
			return '\n'
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, text)
	text = strings.ReplaceAll(text, "*/", "*\\/")
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return lines
}

// inline returns t on one line if it fits in width and has no comment
// inside.
func inline(t *tsType, width int) (string, bool) {
	var b strings.Builder
	ok := inlineTo(&b, t, width, true)
	return b.String(), ok && b.Len() <= width
}

// inlineTo writes t on one line to b while b stays within width; with
// docs, a type with a comment inside cannot be written on one line
// (false), without, its comments are left out.
func inlineTo(b *strings.Builder, t *tsType, width int, docs bool) bool {
	if b.Len() > width {
		return false
	}
	switch t.kind {
	case kName, kLiteral:
		b.WriteString(t.name)
	case kArray:
		if simple(t.elem) {
			b.WriteString(t.elem.name)
			b.WriteString("[]")
			return true
		}
		b.WriteString("Array<")
		if !inlineTo(b, t.elem, width, docs) {
			return false
		}
		b.WriteString(">")
	case kTuple:
		b.WriteString("[")
		for i, e := range t.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			if !inlineTo(b, e, width, docs) {
				return false
			}
		}
		if t.elem != nil {
			if len(t.elems) > 0 {
				b.WriteString(", ")
			}
			b.WriteString("...")
			if !inlineTo(b, &tsType{kind: kArray, elem: t.elem}, width, docs) {
				return false
			}
		}
		b.WriteString("]")
	case kUnion, kInter:
		sep := " | "
		if t.kind == kInter {
			sep = " & "
		}
		for i, e := range t.elems {
			if i > 0 {
				b.WriteString(sep)
			}
			paren := e.kind == kUnion && t.kind == kInter
			if paren {
				b.WriteString("(")
			}
			if !inlineTo(b, e, width, docs) {
				return false
			}
			if paren {
				b.WriteString(")")
			}
		}
	case kObject:
		separate := t.index != nil && len(t.props) > 0 && !isUnknown(t.index)
		if len(t.props) == 0 && t.index == nil {
			b.WriteString("{}")
			return true
		}
		b.WriteString("{ ")
		for i, pr := range t.props {
			if docs && pr.doc != "" {
				return false
			}
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(propertyKey(pr.key))
			if pr.optional {
				b.WriteString("?")
			}
			b.WriteString(": ")
			if !inlineTo(b, pr.t, width, docs) {
				return false
			}
		}
		if t.index != nil && !separate {
			if len(t.props) > 0 {
				b.WriteString("; ")
			}
			b.WriteString("[key: string]: ")
			if !inlineTo(b, t.index, width, docs) {
				return false
			}
		}
		b.WriteString(" }")
		if separate {
			b.WriteString(" & ")
			return inlineTo(b, &tsType{kind: kObject, index: t.index}, width, docs)
		}
	}
	return b.Len() <= width
}

// simple reports whether t is a name or literal, printed before "[]"
// without parentheses.
func simple(t *tsType) bool { return t.kind == kName }

func isUnknown(t *tsType) bool { return t.kind == kName && t.name == "unknown" }

// propertyKey is key as a property name: bare when it is an identifier
// name, quoted otherwise.
func propertyKey(key string) string {
	if isPropertyName(key) {
		return key
	}
	return quote(key)
}
