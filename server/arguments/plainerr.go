package arguments

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	txt "github.com/toolscout/toolscout/internal/text"
)

// Argument errors in plain words. The JSON Schema validator's messages
// read like its internals ("validating root: validating /properties/limit:
// maximum: 500/1 is greater than 100.000000") and echo whole values (a
// 100 KB search_mode came back in a 102 KB error). A model corrects a
// call fastest from what was wrong, where, and what to send instead:
// "limit must be at most 100; you sent 500".

// maxEcho bounds a value quoted back in an error.
const maxEcho = 60

// plainArgumentError returns the first problem of args against an
// object schema in plain words, or "" when it finds none (it reads the
// keywords tool arguments use, at any depth: nested.go; the validator
// still has the last word on the others). tw are the words of the tool's
// name, for the examples of the right shape (nil for none).
func plainArgumentError(schema map[string]any, args map[string]any, tw ...string) string {
	return checker{tw: tw}.objectError(site{schema: schema}, args)
}

// boundsError checks a number's, string's or array's bounds.
func boundsError(name string, p map[string]any, v any) string {
	if n, ok := v.(float64); ok {
		if m, ok := number(p["minimum"]); ok && n < m {
			return fmt.Sprintf("%s must be at least %s; you sent %s", name, num(m), num(n))
		}
		if m, ok := number(p["maximum"]); ok && n > m {
			return fmt.Sprintf("%s must be at most %s; you sent %s", name, num(m), num(n))
		}
		if m, ok := number(p["exclusiveMinimum"]); ok && n <= m {
			return fmt.Sprintf("%s must be more than %s; you sent %s", name, num(m), num(n))
		}
		if m, ok := number(p["exclusiveMaximum"]); ok && n >= m {
			return fmt.Sprintf("%s must be less than %s; you sent %s", name, num(m), num(n))
		}
	}
	if s, ok := v.(string); ok {
		l := float64(utf8.RuneCountInString(s))
		if m, ok := number(p["minLength"]); ok && l < m {
			return fmt.Sprintf("%s must be at least %s long; you sent %s", name, count(m, "character"), describe(v))
		}
		if m, ok := number(p["maxLength"]); ok && l > m {
			return fmt.Sprintf("%s must be at most %s long; you sent %s", name, count(m, "character"), describe(v))
		}
	}
	if a, ok := v.([]any); ok {
		if m, ok := number(p["minItems"]); ok && float64(len(a)) < m {
			return fmt.Sprintf("%s must have at least %s; you sent %d", name, count(m, "item"), len(a))
		}
		if m, ok := number(p["maxItems"]); ok && float64(len(a)) > m {
			return fmt.Sprintf("%s must have at most %s; you sent %d", name, count(m, "item"), len(a))
		}
	}
	return ""
}

// validationPrefix starts the go-sdk's answer to arguments that fail a
// tool's input schema.
const validationPrefix = `validating "arguments": `

// PlainErrors rewrites the go-sdk's schema-validation failures of
// tools/call into plain words, by the schema of the tool called (schemas
// gives it by name), and bounds whatever it cannot rewrite.
func PlainErrors(schemas func(name string) map[string]any) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			cr, ok := res.(*mcp.CallToolResult)
			if err != nil || !ok || cr == nil || !cr.IsError || len(cr.Content) != 1 {
				return res, err
			}
			tc, ok := cr.Content[0].(*mcp.TextContent)
			if !ok || !strings.HasPrefix(tc.Text, validationPrefix) {
				return res, err
			}
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || call.Params == nil {
				return res, err
			}
			msg := ""
			var args map[string]any
			if schema := schemas(call.Params.Name); schema != nil && json.Unmarshal(call.Params.Arguments, &args) == nil {
				msg = plainArgumentError(schema, args)
			}
			if msg == "" {
				msg = plainValidatorError(strings.TrimPrefix(tc.Text, validationPrefix))
			}
			out := *cr
			out.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("invalid arguments for %s: %s", call.Params.Name, msg)}}
			return &out, nil
		}
	}
}

// boundText cuts s to at most n bytes at a rune boundary, saying how long
// it was.
func boundText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes in all)", txt.Prefix(s, n), len(s))
}

// describe names a value for an error: short values as JSON, long ones
// cut, with their size.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return txt.Quote(x, maxEcho)
	case map[string]any:
		return "an object of " + count(float64(len(x)), "property")
	case []any:
		return "an array of " + count(float64(len(x)), "item")
	case float64:
		return num(x)
	}
	data, _ := json.Marshal(v)
	return boundText(string(data), maxEcho)
}

// jsonType is the JSON Schema type of a decoded JSON value.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// typeNames reads a schema's type: a name or a list of names.
func typeNames(t any) []string {
	if s, ok := t.(string); ok {
		return []string{s}
	}
	return stringList(t)
}

func article(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "integer", "array", "object":
			out[i] = "an " + t
		case "null":
			out[i] = "null"
		default:
			out[i] = "a " + t
		}
	}
	return out
}

func orList(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// stringList reads a list of strings from decoded JSON or Go values.
func stringList(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// number reads a schema's numeric keyword from decoded JSON or Go values.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func num(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%g", x)
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// Decode returns a schema (or any JSON object) as decoded JSON (maps,
// []any, float64), whether it was written in Go or read from JSON; nil if
// it is not an object.
func Decode(v any) map[string]any {
	var data []byte
	switch x := v.(type) {
	case json.RawMessage:
		data = x
	default:
		var err error
		if data, err = json.Marshal(v); err != nil {
			return nil
		}
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m
}

// count says n things, in the singular for one.
func count(n float64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	if strings.HasSuffix(thing, "y") {
		return num(n) + " " + strings.TrimSuffix(thing, "y") + "ies"
	}
	return num(n) + " " + thing + "s"
}
