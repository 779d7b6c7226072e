package stdio

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/toolscout/toolscout/internal/rawjson"
)

// The go-sdk keeps a request id as a string or an int64 made from a float64,
// so it answers 1.5 with 1, 1e2 with 100 and a 30-digit id with whatever the
// conversion gives, and it treats ids that differ only in those lost digits
// as one. Ids it cannot echo byte for byte are therefore swapped, on the way
// in, for a string of toolscout's own (syntheticID and a counter), and
// swapped back in the answer; a client string that starts with syntheticID
// is swapped too, so the two kinds never meet.
const syntheticID = "toolscout~id~"

// sdkKeepsID reports whether the go-sdk echoes id (a JSON string or number
// as sent) with exactly the same bytes: a string without escapes (its
// encoder would write them back differently, or escape U+2028 and U+2029),
// or an integer written plainly within float64's exact range.
func sdkKeepsID(id json.RawMessage) bool {
	switch kindOf(id) {
	case idString:
		return !bytes.ContainsAny(id, "\\\u2028\u2029") && !bytes.HasPrefix(id[1:], []byte(syntheticID))
	case idNumber:
		n, err := strconv.ParseInt(string(id), 10, 64)
		return err == nil && n >= -1<<53 && n <= 1<<53 && strconv.FormatInt(n, 10) == string(id)
	}
	return false
}

// idKey is the identity of a client id: two ids that a client would take
// for the same one (the string "A" written as "A" or "\u0041") share a key.
// Numbers compare by their text.
func idKey(id json.RawMessage) string {
	if kindOf(id) == idString {
		return "s" + decodeString(id)
	}
	return "n" + string(id)
}

// inflight is one call of the client that has no answer yet.
type inflight struct {
	key     string
	sent    json.RawMessage // the id as the client sent it
	wire    string          // the id as the SDK reads and echoes it
	method  string
	preInit bool // sent before the server answered an initialize
}

// callTable follows the client's calls between a line going to the SDK and
// its answer coming out, for three things the SDK does not do on stdio:
// refusing an id already in flight with an answer (the SDK drops the second
// call without one), echoing every id exactly as sent, and giving lifecycle
// errors a real JSON-RPC code.
type callTable struct {
	mu          sync.Mutex
	byKey       map[string]*inflight
	byWire      map[string]*inflight
	n           uint64
	initialized bool
}

func newCallTable() *callTable {
	return &callTable{byKey: map[string]*inflight{}, byWire: map[string]*inflight{}}
}

// begin records a call and returns the id to hand the SDK, or false when a
// call with the same id has not been answered yet.
func (t *callTable) begin(id json.RawMessage, method string) (json.RawMessage, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := idKey(id)
	if t.byKey[key] != nil {
		return nil, false
	}
	wire := string(id)
	if !sdkKeepsID(id) {
		t.n++
		wire = strconv.Quote(syntheticID + strconv.FormatUint(t.n, 10))
	}
	c := &inflight{key: key, sent: id, wire: wire, method: method, preInit: !t.initialized}
	t.byKey[key], t.byWire[wire] = c, c
	return json.RawMessage(wire), true
}

// wireID returns the id the SDK knows the call in flight with id by.
func (t *callTable) wireID(id json.RawMessage) (json.RawMessage, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.byKey[idKey(id)]; c != nil {
		return json.RawMessage(c.wire), true
	}
	return nil, false
}

// end forgets the call the SDK answers with wire, before the answer is
// written: the client may reuse the id as soon as it reads it.
func (t *callTable) end(wire []byte, ok bool) *inflight {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.byWire[string(wire)]
	if c == nil {
		return nil
	}
	delete(t.byWire, c.wire)
	delete(t.byKey, c.key)
	if ok && c.method == "initialize" {
		t.initialized = true
	}
	return c
}

// lifecycleCode replaces the code 0 the go-sdk (v1.8.0) gives errors that
// carry no code, among them its answers to a call made before initialize
// ("method %q is invalid during session initialization") and to a second
// initialize ("duplicate "initialize" received"). 0 is no JSON-RPC code.
// Both are answered -32600 Invalid Request: JSON-RPC 2.0 leaves lifecycle
// errors to the application and MCP names no code for them; -32600 is the
// standard code for a request the server will not take as sent, and the
// one the TypeScript SDK answers a second initialize with. A code from the
// server range -32000 to -32099 would be private to toolscout and could
// collide with the ones MCP itself hands out there (-32002 resource not
// found, -32042 URL elicitation required). Any other code-0 error is a
// handler's failure: -32603 Internal error.
func lifecycleCode(c *inflight) int64 {
	if c.method == "initialize" || c.preInit {
		return codeInvalidRequest
	}
	return codeInternalError
}

// sdkNoticePrefix begins each notification the go-sdk (v1.8.0) writes, as
// one line (a message with an id begins as rawjson.SDKID says).
var sdkNoticePrefix = []byte(`{"jsonrpc":"2.0","method":`)

// rewrite returns line (one message the SDK wrote) with the id of a
// response to the client put back as the client sent it and a code 0 made
// a real code; it ends the call in the table. Other lines are unchanged.
func (t *callTable) rewrite(line []byte) []byte {
	if bytes.HasPrefix(line, sdkNoticePrefix) {
		return line
	}
	start, end, ok := rawjson.SDKID(line)
	if !ok {
		return t.rewriteSlow(line)
	}
	rest := line[end:]
	var isErr bool
	switch {
	case bytes.HasPrefix(rest, []byte(`,"method":`)):
		return line // a request of the server
	case bytes.HasPrefix(rest, []byte(`,"result":`)):
	case bytes.HasPrefix(rest, []byte(`,"error":{"code":`)):
		isErr = true
	default:
		return t.rewriteSlow(line)
	}
	c := t.end(line[start:end], !isErr)
	if c == nil || !isErr && bytes.Equal(c.sent, line[start:end]) {
		return line // a large result is not copied to write the same id
	}
	out := make([]byte, 0, len(line)+len(c.sent))
	out = append(out, line[:start]...)
	out = append(out, c.sent...)
	if isErr {
		at := len(`,"error":{"code":`)
		if n := rawjson.TokenLen(rest[at:]); string(rest[at:at+n]) == "0" {
			out = append(out, rest[:at]...)
			out = strconv.AppendInt(out, lifecycleCode(c), 10)
			rest = rest[at+n:]
		}
	}
	return append(out, rest...)
}

// rewriteSlow is rewrite for a line not in the SDK's usual layout.
func (t *callTable) rewriteSlow(line []byte) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil || msg["id"] == nil || msg["method"] != nil {
		return line
	}
	var e *rpcError
	if msg["error"] != nil && json.Unmarshal(msg["error"], &e) != nil {
		return line
	}
	id := bytes.TrimSpace(msg["id"])
	c := t.end(id, e == nil)
	if c == nil {
		return line
	}
	msg["id"] = c.sent
	if e != nil && e.Code == 0 {
		e.Code = lifecycleCode(c)
		msg["error"], _ = json.Marshal(e)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // the id goes back byte for byte
	if enc.Encode(msg) != nil {
		return line
	}
	return out.Bytes()
}

// cancelled rewrites a notifications/cancelled from the client to name the
// call by the id the SDK knows, and reports false when it names no call in
// flight: the SDK would take 1.5 for 1 and cancel the wrong call.
func (t *callTable) cancelled(m *rpcMessage) bool {
	var p map[string]json.RawMessage
	if json.Unmarshal(m.params, &p) != nil || p == nil {
		return true // the SDK answers nothing to a malformed notification either
	}
	kind := kindOf(p["requestId"])
	if kind != idString && kind != idNumber {
		return true
	}
	wire, ok := t.wireID(p["requestId"])
	if !ok {
		return false
	}
	p["requestId"] = wire
	params, err := json.Marshal(p)
	m.params = params
	return err == nil
}
