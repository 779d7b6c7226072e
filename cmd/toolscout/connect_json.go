package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/toolscout/toolscout/internal/rawjson"
)

// Editing a JSON file in place for connect: members are found by their
// offsets in the file (blankJSONC keeps offsets), and edits splice new
// text in, so that every byte connect does not mean to change (other
// keys, their layout, comments outside the servers) stays as it was.

// span is [start, end) of a file's bytes.
type span struct{ start, end int }

// jsonMember is one member of an object: the whole "name": value, and
// the value.
type jsonMember struct {
	name         string
	member, with span
}

// offsetIn returns where the sub-slice sub starts in data.
func offsetIn(data, sub []byte) int { return cap(data) - cap(sub) }

// objectMembers returns the members of the object at obj in plain.
func objectMembers(plain []byte, obj span) []jsonMember {
	var out []jsonMember
	o := plain[obj.start:obj.end]
	rawjson.EachMember(o, func(name string, member, value []byte) bool {
		m := offsetIn(plain, member)
		v := offsetIn(plain, value)
		out = append(out, jsonMember{name: name, member: span{m, m + len(member)}, with: span{v, v + len(value)}})
		return true
	})
	return out
}

// topObject returns the span of the file's top-level object.
func topObject(plain []byte) span {
	start := rawjson.SkipSpace(plain, 0)
	end := len(bytes.TrimRight(plain, " \t\r\n"))
	return span{start, end}
}

// findMember returns the top-level member called name.
func findMember(plain []byte, name string) (jsonMember, bool) {
	for _, m := range objectMembers(plain, topObject(plain)) {
		if m.name == name {
			return m, true
		}
	}
	return jsonMember{}, false
}

// lineIndent returns the white space that starts the line holding off.
func lineIndent(data []byte, off int) string {
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// indentUnit guesses one level of the file's indentation from a member
// of the top-level object at off: its line's indent, or two spaces.
func indentUnit(data []byte, off int) string {
	if u := lineIndent(data, off); u != "" && bytes.LastIndexByte(data[:off], '\n') >= 0 {
		return u
	}
	return "  "
}

// indented returns the JSON value v laid out one member a line, its
// inner lines starting with prefix, as the file around it is.
func indented(v []byte, prefix, unit string) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, v, prefix, unit); err != nil {
		return v
	}
	return b.Bytes()
}

// objectText returns an object of the members (name, value), laid out
// at the indentation prefix of the line it starts on.
func objectText(names []string, values [][]byte, prefix, unit string) []byte {
	if len(names) == 0 {
		return []byte("{}")
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, name := range names {
		q, _ := json.Marshal(name)
		b.WriteString(prefix + unit)
		b.Write(q)
		b.WriteString(": ")
		b.Write(indented(values[i], prefix+unit, unit))
		if i < len(names)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(prefix + "}")
	return b.Bytes()
}

// edit replaces a span of a file with text.
type edit struct {
	at   span
	text []byte
}

// applyEdits returns data with the edits made (they must not overlap).
func applyEdits(data []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return b.at.start - a.at.start })
	out := bytes.Clone(data)
	for _, e := range edits {
		out = slices.Concat(out[:e.at.start], e.text, out[e.at.end:])
	}
	return out
}

// canonicalJSON returns v with its object keys sorted and no white
// space: two definitions are the same when these are.
func canonicalJSON(v []byte) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return string(v)
	}
	out, _ := json.Marshal(x)
	return string(out)
}

// maskSecrets returns text with each of the JSON string tokens in
// secrets replaced by "***".
func maskSecrets(text string, secrets []string) string {
	// The longest first: a secret that holds another is masked whole.
	s := slices.Clone(secrets)
	slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
	for _, tok := range s {
		text = strings.ReplaceAll(text, tok, `"***"`)
	}
	return text
}

// entrySecrets returns the string values of the env and headers objects
// of a server entry, as JSON tokens written in the file.
func entrySecrets(entry []byte) []string {
	var out []string
	if len(entry) == 0 || entry[0] != '{' {
		return nil
	}
	rawjson.EachMember(entry, func(name string, _, value []byte) bool {
		if (name == "env" || name == "headers") && len(value) > 0 && value[0] == '{' {
			rawjson.EachMember(value, func(_ string, _, v []byte) bool {
				if len(v) > 2 && v[0] == '"' {
					out = append(out, string(v))
				}
				return true
			})
		}
		return true
	})
	return out
}
