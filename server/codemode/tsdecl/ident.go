package tsdecl

import (
	"slices"
	"strconv"
	"strings"
)

// Ident makes a tool's or a domain's name a valid JavaScript identifier:
// every character outside [A-Za-z0-9_$] becomes "_", a leading digit
// gets a "_" before it, a reserved word (reserved) a "_" after it, and
// the empty name is "_". A name that is already a valid identifier is
// itself.
//
// Different names can make the same identifier ("get-sum" and
// "get_sum"); Idents tells them apart.
func Ident(name string) string {
	var b strings.Builder
	for i, r := range name {
		if i == 0 && '0' <= r && r <= '9' {
			b.WriteByte('_')
		}
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '$' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" {
		return "_"
	}
	if reserved[s] {
		s += "_"
	}
	return s
}

// Idents maps each of names (the tools of one domain, or the domains)
// to an identifier of its own, the same whatever the order of names
// (repeated names count once):
//
//  1. A name that is a valid identifier (Ident(name) == name) is its own
//     identifier: "create_entities" stays callable as such.
//  2. The other names, in byte order, each take Ident(name) if no name
//     took it before, otherwise the first of Ident(name)+"_2",
//     Ident(name)+"_3", ... that is free.
//
// So of "get-sum" and "get.sum" the first is get_sum and the second
// get_sum_2, and if the domain also has "get_sum", that one keeps
// get_sum and "get-sum" becomes get_sum_2, "get.sum" get_sum_3.
//
// The identifiers depend on the whole set: a tool added to a domain can
// change the identifier of a tool whose name collides with it, never
// that of a tool whose name is a valid identifier. Whoever resolves an
// identifier back to a name (the code-mode sandbox) must map the same
// set of names as the declarations did (Options.Names).
func Idents(names []string) map[string]string {
	out := make(map[string]string, len(names))
	taken := make(map[string]bool, len(names))
	var rest []string
	for _, n := range names {
		if _, seen := out[n]; seen {
			continue
		}
		if Ident(n) == n {
			out[n], taken[n] = n, true
		} else {
			out[n] = "" // placed below
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	for _, n := range rest {
		id := Ident(n)
		for i := 2; taken[id]; i++ {
			id = Ident(n) + "_" + strconv.Itoa(i)
		}
		out[n], taken[id] = id, true
	}
	return out
}

// reserved are the words that cannot name a function or a namespace in
// strict-mode JavaScript or in TypeScript declarations: the reserved
// words of ECMAScript (with the strict-mode and future ones), the
// literals, and arguments and eval, which strict mode forbids as names.
var reserved = map[string]bool{
	"await": true, "break": true, "case": true, "catch": true, "class": true, "const": true,
	"continue": true, "debugger": true, "default": true, "delete": true, "do": true, "else": true,
	"enum": true, "export": true, "extends": true, "false": true, "finally": true, "for": true,
	"function": true, "if": true, "import": true, "in": true, "instanceof": true, "new": true,
	"null": true, "return": true, "super": true, "switch": true, "this": true, "throw": true,
	"true": true, "try": true, "typeof": true, "var": true, "void": true, "while": true,
	"with": true, "yield": true, "let": true, "static": true, "implements": true, "interface": true,
	"package": true, "private": true, "protected": true, "public": true, "arguments": true, "eval": true,
}

// isPropertyName reports whether s can name a property unquoted: an
// identifier by the rule of Ident, reserved words included (they are
// valid property names).
func isPropertyName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '$') {
			return false
		}
	}
	return true
}
