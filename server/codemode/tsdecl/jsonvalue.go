package tsdecl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// value is a decoded JSON value that keeps its objects' keys in the
// order of the text: Go maps lose it, and a schema's properties are
// declared in the order the schema gives them.
type value struct {
	kind byte     // 'o' object, 'a' array, 's' string, 'n' number, 'b' boolean, 'z' null
	keys []string // an object's keys, in order
	vals []*value // an object's values (by index of keys) or an array's elements
	s    string   // a string, or a number's text
	b    bool
}

// errNotJSON is what parse says of bytes that are not one JSON value.
var errNotJSON = errors.New("not a JSON value")

// parse decodes raw, which must hold one JSON value.
func parse(raw []byte) (*value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotJSON
	}
	return v, nil
}

// decodeValue reads the next value of dec. The decoder itself refuses
// nesting deeper than 10,000, which bounds the recursion.
func decodeValue(dec *json.Decoder) (*value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &value{kind: 'o'}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := k.(string)
				if !ok {
					return nil, errNotJSON
				}
				e, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				v.keys = append(v.keys, key)
				v.vals = append(v.vals, e)
			}
			_, err := dec.Token() // '}'
			return v, err
		case '[':
			v := &value{kind: 'a'}
			for dec.More() {
				e, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				v.vals = append(v.vals, e)
			}
			_, err := dec.Token() // ']'
			return v, err
		}
		return nil, errNotJSON
	case string:
		return &value{kind: 's', s: t}, nil
	case json.Number:
		return &value{kind: 'n', s: string(t)}, nil
	case bool:
		return &value{kind: 'b', b: t}, nil
	case nil:
		return &value{kind: 'z'}, nil
	}
	return nil, errNotJSON
}

// get returns the member key of an object (the last, as encoding/json
// keeps a repeated key), or nil.
func (v *value) get(key string) *value {
	if v == nil || v.kind != 'o' {
		return nil
	}
	for i := len(v.keys) - 1; i >= 0; i-- {
		if v.keys[i] == key {
			return v.vals[i]
		}
	}
	return nil
}

// str returns the member key if it is a string.
func (v *value) str(key string) (string, bool) {
	m := v.get(key)
	if m == nil || m.kind != 's' {
		return "", false
	}
	return m.s, true
}

// is reports whether the member key is the boolean b.
func (v *value) is(key string, b bool) bool {
	m := v.get(key)
	return m != nil && m.kind == 'b' && m.b == b
}

// pointer resolves a local JSON Pointer reference ("#", "#/$defs/Name")
// against root, or returns nil.
func pointer(root *value, ref string) *value {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	if frag == "" {
		return root
	}
	if frag[0] != '/' {
		return nil // a named anchor
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil
	}
	cur := root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch {
		case cur == nil:
			return nil
		case cur.kind == 'o':
			cur = cur.get(tok)
		case cur.kind == 'a':
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.vals) || tok != strconv.Itoa(i) {
				return nil
			}
			cur = cur.vals[i]
		default:
			return nil
		}
	}
	return cur
}

// writeJSON writes v as compact JSON, keys in order, no HTML escaping.
func (v *value) writeJSON(b *strings.Builder) {
	switch v.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quote(k))
			b.WriteByte(':')
			v.vals[i].writeJSON(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, e := range v.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			e.writeJSON(b)
		}
		b.WriteByte(']')
	case 's':
		b.WriteString(quote(v.s))
	case 'n':
		b.WriteString(v.s)
	case 'b':
		b.WriteString(strconv.FormatBool(v.b))
	default:
		b.WriteString("null")
	}
}

// quote returns s as a JSON string, which is also a JavaScript and
// TypeScript string literal, without HTML escaping.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
