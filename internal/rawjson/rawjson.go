// Package rawjson reads JSON as the bytes it was written in, without
// decoding it: where values end, the members of an object and the
// elements of an array as sub-slices of their input, and the id of a
// message in the layout the go-sdk writes. The scanners allocate nothing.
//
// Its place: below the server's packages that pass large JSON through as
// bytes (server/relay keeps an upstream's tool result as it was sent,
// server/gateway decodes an upstream's lines without copying them,
// server/stdio puts the client's ids back in the SDK's lines). It is not
// a toolscout concept, and it knows nothing of MCP.
//
//	rawjson.EachMember(obj, func(name string, member, value []byte) bool {
//		fmt.Printf("%s is %s\n", name, value)
//		return true
//	})
package rawjson

import (
	"bytes"
	"encoding/json"
)

// String returns the string the JSON value v holds, or "".
func String(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	var s string
	json.Unmarshal(v, &s)
	return s
}

// The scanners below walk valid JSON (json.Valid said so): they find
// where values end.

// EachMember calls fn with the name, the whole member ("name":value, as
// written) and the value of each member of the object obj, until fn
// returns false.
func EachMember(obj []byte, fn func(name string, member, value []byte) bool) {
	i := SkipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		start := i
		nameEnd := SkipString(obj, i)
		name := String(obj[start:nameEnd])
		i = SkipSpace(obj, nameEnd)
		i = SkipSpace(obj, i+1) // past ':'
		vStart := i
		i = skipValue(obj, i)
		if !fn(name, obj[start:i], obj[vStart:i]) {
			return
		}
		i = SkipSpace(obj, i)
		if i < len(obj) && obj[i] == ',' {
			i = SkipSpace(obj, i+1)
		}
	}
}

// EachElement calls fn with each element of the array arr until fn
// returns false.
func EachElement(arr []byte, fn func(v []byte) bool) {
	i := SkipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		start := i
		i = skipValue(arr, i)
		if !fn(arr[start:i]) {
			return
		}
		i = SkipSpace(arr, i)
		if i < len(arr) && arr[i] == ',' {
			i = SkipSpace(arr, i+1)
		}
	}
}

// SkipSpace returns the index of the first byte at or after b[i] that
// is not JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the end of the string that starts at b[i].
func SkipString(b []byte, i int) int {
	i++
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		i += q
		n := 0 // backslashes right before the quote
		for n < i && b[i-1-n] == '\\' {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
}

// skipValue returns the end of the value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = SkipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && bytes.IndexByte([]byte(",}] \t\r\n"), b[i]) < 0 {
		i++
	}
	return i
}

// TokenLen returns the length of the JSON string or number at the start
// of b.
func TokenLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if b[0] != '"' {
		n := 0
		for n < len(b) && bytes.IndexByte([]byte("+-.0123456789eE"), b[n]) >= 0 {
			n++
		}
		return n
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// sdkIDPrefix begins each message with an id that the go-sdk (v1.8.0)
// writes: a response, or a request of the server.
const sdkIDPrefix = `{"jsonrpc":"2.0","id":`

// SDKID reports whether msg begins as the go-sdk writes a message with an
// id, and where that id (a JSON string or number) is: msg[start:end].
func SDKID(msg []byte) (start, end int, ok bool) {
	if !bytes.HasPrefix(msg, []byte(sdkIDPrefix)) {
		return 0, 0, false
	}
	start = len(sdkIDPrefix)
	return start, start + TokenLen(msg[start:]), true
}

// Deeper reports whether objects and arrays nest more than max levels
// deep in data, counted as the go-sdk counts them (brackets outside
// strings). It stops at the first bracket past max.
func Deeper(data []byte, max int) bool {
	depth := 0
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}
