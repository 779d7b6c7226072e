package stdio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/toolscout/toolscout/internal/rawjson"
)

// MaxStdioLine bounds one JSON-RPC message on stdio; a longer line is
// answered with an error and skipped, never buffered whole.
const MaxStdioLine = 4 << 20

// maxHead is how much of a line over MaxStdioLine is kept to find its id
// (headRequestID).
const maxHead = 4 << 10

// headRequestID returns the id of the request a message too long to read
// whole begins: its top-level "id", a string or a number, when the head
// holds it and a top-level "method" before the first member it cannot
// read whole. A response (no method before that point) or an id after
// the bulk gets none: the answer's id is then null.
func headRequestID(head []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var id json.RawMessage
	method := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		switch key {
		case "id":
			if k := kindOf(v); (k != idString && k != idNumber) || !utf8.Valid(v) || id != nil {
				return nil, false
			}
			id = v
		case "method":
			method = kindOf(v) == idString
		}
		if id != nil && method {
			return id, true
		}
	}
	return nil, false
}

// MaxJSONDepth is the deepest nesting of objects and arrays a stdio message
// may have: the go-sdk's decoder refuses deeper input by ending the session,
// so the guard answers it instead.
const MaxJSONDepth = 1000

// JSON-RPC 2.0 error codes for messages that never reach the SDK.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInternalError  = -32603
)

// rpcMessage is a line that passed the guard: one JSON-RPC 2.0 request,
// notification or response, split into the members the SDK reads, each
// kept as the bytes the client sent. Other members are dropped.
type rpcMessage struct {
	id      json.RawMessage // nil for a notification
	method  string          // decoded; "" for a response
	rawMeth json.RawMessage
	params  json.RawMessage // nil when absent or null
	result  json.RawMessage // responses only
	errObj  *rpcError       // responses only
}

func (m *rpcMessage) isResponse() bool { return m.method == "" }

// encode writes the message as the SDK should read it, with wire as its id:
// one member of each name, exactly the shapes the SDK's decoder accepts.
func (m *rpcMessage) encode(wire json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0"`)
	if wire != nil {
		b.WriteString(`,"id":`)
		b.Write(wire)
	}
	if !m.isResponse() {
		b.WriteString(`,"method":`)
		b.Write(m.rawMeth)
		if m.params != nil {
			b.WriteString(`,"params":`)
			b.Write(m.params)
		}
	} else if m.errObj != nil {
		e, _ := json.Marshal(m.errObj)
		b.WriteString(`,"error":`)
		b.Write(e)
	} else {
		b.WriteString(`,"result":`)
		b.Write(m.result)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// lineError is why a line does not reach the SDK. A bad request or
// notification is answered; a bad response never is (answering a response
// could start two peers trading error replies), only logged.
type lineError struct {
	code   int64
	reason string
	id     json.RawMessage // the id echoed byte for byte; nil means null
	silent bool
}

// reply is the JSON-RPC 2.0 error response to the line, its id written
// byte for byte (json.Marshal would rewrite "<" in a string id).
func (e *lineError) reply() []byte {
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal(rpcError{Code: e.code, Message: e.reason})
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	out = append(out, `,"error":`...)
	out = append(out, msg...)
	return append(out, "}\n"...)
}

// parseLine checks one line (without its newline) the way JSON-RPC 2.0 and
// MCP ask, and more strictly than the go-sdk's decoder, which ends the
// session on anything it cannot decode. It returns the message to forward,
// or why not: -32700 for a line that is not JSON (or not UTF-8, over
// MaxStdioLine, nested deeper than MaxJSONDepth), -32600 for JSON that is
// not a valid request object (a batch, a wrong "jsonrpc", a "method" that
// is not a non-empty string, an id that is not a string or a number,
// "params" that is not an object or array). Ids are echoed as sent when
// they are a string or a number, and as null otherwise, as JSON-RPC 2.0
// says.
func parseLine(line []byte, tooLong bool) (*rpcMessage, *lineError) {
	parseErr := func(format string, args ...any) *lineError {
		return &lineError{code: codeParseError, reason: "Parse error: " + fmt.Sprintf(format, args...)}
	}
	switch {
	case tooLong:
		// A request whose id and method come before its bulk (as every
		// SDK writes them) gets its error under its id, so that the
		// client's call fails at once instead of waiting for an answer.
		if id, ok := headRequestID(line); ok {
			return nil, &lineError{code: codeInvalidRequest, id: id,
				reason: fmt.Sprintf("Invalid Request: message over %d bytes; send less in one message (a shorter query, smaller arguments)", MaxStdioLine)}
		}
		return nil, parseErr("message over %d bytes", MaxStdioLine)
	case !utf8.Valid(line):
		return nil, parseErr("message is not valid UTF-8")
	case rawjson.Deeper(line, MaxJSONDepth):
		return nil, parseErr("JSON nested deeper than %d levels", MaxJSONDepth)
	case !json.Valid(line):
		return nil, parseErr("message is not valid JSON")
	}
	invalid := func(id json.RawMessage, format string, args ...any) *lineError {
		return &lineError{code: codeInvalidRequest, reason: "Invalid Request: " + fmt.Sprintf(format, args...), id: id}
	}
	if line[0] == '[' {
		return nil, invalid(nil, "batches are not supported; send one message per line")
	}
	if line[0] != '{' {
		return nil, invalid(nil, "not a JSON-RPC 2.0 message object")
	}
	mem, dup := members(line)
	if dup != "" {
		return nil, invalid(nil, "member %q appears twice", dup)
	}
	id, idKind := mem["id"], kindOf(mem["id"])
	echo := id
	if idKind != idString && idKind != idNumber {
		echo = nil
	}
	_, hasResult := mem["result"]
	_, hasError := mem["error"]
	rawMeth, hasMethod := mem["method"]
	if !hasMethod && (hasResult || hasError) {
		return parseResponse(mem, id, idKind)
	}
	if decodeString(mem["jsonrpc"]) != "2.0" {
		return nil, invalid(echo, `"jsonrpc" must be "2.0"`)
	}
	if !hasMethod {
		return nil, invalid(echo, `a message has a "method" (request or notification) or a "result" or "error" (response)`)
	}
	if kindOf(rawMeth) != idString {
		return nil, invalid(echo, `"method" must be a string`)
	}
	m := &rpcMessage{id: id, method: decodeString(rawMeth), rawMeth: rawMeth, params: mem["params"]}
	if m.method == "" {
		return nil, invalid(echo, `"method" is empty`)
	}
	switch idKind {
	case idNull:
		// JSON-RPC 2.0 discourages a null id; MCP forbids it, and a reply
		// carrying it could not be told from one to an unreadable line.
		return nil, invalid(nil, `"id" must be a string or a number, not null`)
	case idObject, idArray, idOther:
		return nil, invalid(nil, `"id" must be a string or a number`)
	}
	switch kindOf(m.params) {
	case idNone, idNull:
		m.params = nil // the SDK reads a null params as none
	case idObject, idArray:
	default:
		return nil, invalid(echo, `"params" must be an object or an array`)
	}
	return m, nil
}

// parseResponse checks a response from the client (the answer to a server
// request such as ping or roots/list); a bad one is dropped, not answered.
func parseResponse(mem map[string]json.RawMessage, id json.RawMessage, idKind int) (*rpcMessage, *lineError) {
	drop := func(reason string) (*rpcMessage, *lineError) {
		return nil, &lineError{code: codeInvalidRequest, reason: "response dropped: " + reason, silent: true}
	}
	if decodeString(mem["jsonrpc"]) != "2.0" {
		return drop(`"jsonrpc" is not "2.0"`)
	}
	if idKind != idString && idKind != idNumber || !sdkKeepsID(id) {
		// The server numbers its requests with small integers: any other
		// id answers nothing it sent (a null id reports an error the client
		// could not attribute, which the server has no use for).
		return drop("its id matches no request of the server")
	}
	res, hasResult := mem["result"]
	e, hasError := mem["error"]
	if hasResult && kindOf(e) == idNull {
		hasError = false // "error":null beside a result is common enough
	}
	if hasResult == hasError {
		return drop(`a response has exactly one of "result" and "error"`)
	}
	m := &rpcMessage{id: id, result: res}
	if hasError {
		var w struct {
			Code    json.RawMessage `json:"code"`
			Message json.RawMessage `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if json.Unmarshal(e, &w) != nil || kindOf(w.Message) != idString {
			return drop(`"error" must be an object with an integer "code" and a string "message"`)
		}
		code, err := strconv.ParseInt(string(w.Code), 10, 64)
		if err != nil {
			return drop(`"error" must be an object with an integer "code" and a string "message"`)
		}
		m.errObj = &rpcError{Code: code, Message: decodeString(w.Message), Data: w.Data}
	}
	return m, nil
}

// The kinds of JSON value an id (or any member) can be.
const (
	idNone = iota // absent
	idString
	idNumber
	idNull
	idObject
	idArray
	idOther // true or false
)

func kindOf(v json.RawMessage) int {
	if len(v) == 0 {
		return idNone
	}
	switch c := v[0]; {
	case c == '"':
		return idString
	case c == '-' || c >= '0' && c <= '9':
		return idNumber
	case c == 'n':
		return idNull
	case c == '{':
		return idObject
	case c == '[':
		return idArray
	}
	return idOther
}

// decodeString returns the JSON string v decodes to, or "" when it is not
// a string.
func decodeString(v json.RawMessage) string {
	var s string
	if kindOf(v) != idString || json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// members splits a valid JSON object into its members, keyed by exact
// (case-sensitive, unescaped) name as the go-sdk matches them, each value
// as the bytes on the line. It reports the first name of a member the SDK
// reads that appears twice: which of the two counts would be a guess.
func members(obj []byte) (map[string]json.RawMessage, string) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.Token() // {
	mem := map[string]json.RawMessage{}
	for dec.More() {
		tok, _ := dec.Token()
		name, _ := tok.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break // cannot happen on valid JSON
		}
		switch name {
		case "jsonrpc", "id", "method", "params", "result", "error":
			if _, ok := mem[name]; ok {
				return nil, name
			}
			mem[name] = v
		}
	}
	return mem, ""
}
