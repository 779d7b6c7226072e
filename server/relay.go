package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Relaying a tool result used to cost 13 to 17 times its size in peak
// memory and allocate 33 times it (issue 26): the SDK's stdio transport
// grew each upstream line in a json.Decoder (kept for the session's life),
// copied it out, decoded it into a JSON-RPC message (two more copies),
// decoded the result into Content strings (two more), and the server side
// marshalled it back at four nested levels, each with its own buffers. A
// large result now goes through as the bytes the upstream sent:
//
//   - lineConn, the client side of a stdio upstream session, hands the SDK
//     each line the frameGuard read (lineBuf: twice the line's size
//     allocated in all) without copying it: members of a message are
//     sub-slices of the line.
//   - A tools/call made with a relaySlot in its context (run does that)
//     whose result is at least relayRawMin bytes is kept raw in the slot,
//     and the SDK decodes a stub in its place ({"content":[]} and isError).
//   - run marks the stub it returns with the raw body (relayMetaKey), and
//     relayMiddleware turns it into a rawResult, which marshals as the
//     upstream's result less its _meta (in place in the line, no copy),
//     with the members the SDK adds (the new protocol's _meta serverInfo
//     and resultType) in front (one copy).
//
// Over HTTP (and any transport of the SDK's), what remains are the copies
// the SDK's JSON-RPC layer makes of any response it sends: compacted into
// an encoder's buffer, written into a bytes.Buffer, twice
// (jsonrpc2.NewResponse, then EncodeMessage); three allocations of the
// result's size, one encoder buffer being pooled. Over toolscout's stdio
// transport (ServeStdio) the result skips the encoder: the transport
// writes the upstream's bytes in place of a placeholder (splice.go). See
// BENCHMARKS.md, "Relaying large results (issue 26)".

// relayRawMin is the size from which a tool result is relayed raw. Smaller
// results take the SDK's path, which checks every content block.
const relayRawMin = 256 << 10

// relayMetaKey marks, in the _meta of a result run returns, the raw body
// relayMiddleware relays in its place.
const relayMetaKey = "io.toolscout/relay"

// relaySlot receives the raw result of the tools/call made with it in its
// context, when lineConn kept that result raw.
type relaySlot struct{ body atomic.Pointer[relayBody] }

// ctxKey is the key under which a context carries a *T: a relaySlot, a
// splicer.
type ctxKey[T any] struct{}

func withValue[T any](ctx context.Context, v *T) context.Context {
	return context.WithValue(ctx, ctxKey[T]{}, v)
}

// valueFrom returns the *T ctx carries, or nil.
func valueFrom[T any](ctx context.Context) *T {
	v, _ := ctx.Value(ctxKey[T]{}).(*T)
	return v
}

// relayBody is an upstream's tools/call result as the bytes it sent: the
// members to relay, in order, each a sub-slice of the upstream's line
// (name and value, as written). The upstream's _meta is not among them.
type relayBody struct {
	members [][]byte
	size    int // sum of the members' lengths
	// whole is the result less its _meta as one object, made in place in
	// the upstream's line (nil when its _meta is neither first nor last):
	// what rawResult writes when the SDK adds no member.
	whole []byte
}

// MarshalJSON refuses: a relayBody left in a result's _meta means the
// result did not pass relayMiddleware, and relaying an empty result in
// its place would lose the answer silently.
func (*relayBody) MarshalJSON() ([]byte, error) {
	return nil, errors.New("toolscout: a relayed tool result reached the encoder without relayMiddleware")
}

// relayContentTypes are the content blocks a CallToolResult may hold, as
// the SDK decodes them: a result with any other block takes the SDK's
// path, which answers it with an error.
var relayContentTypes = map[string]bool{"text": true, "image": true, "audio": true, "resource_link": true, "resource": true}

// newRelayBody returns result as a relayBody, or nil when it is small or
// not a result the SDK would relay as is: an object with a content array
// of known blocks, whose members are named once each.
func newRelayBody(result []byte) *relayBody {
	if len(result) < relayRawMin || result[0] != '{' {
		return nil
	}
	b := &relayBody{}
	seen := map[string]bool{}
	ok := true
	hasContent := false
	meta := -1 // index of _meta among the members
	var all [][]byte
	eachMember(result, func(name string, member, value []byte) bool {
		if seen[name] {
			ok = false
			return false
		}
		seen[name] = true
		all = append(all, member)
		switch name {
		case "_meta":
			meta = len(all) - 1
			return true
		case "content":
			hasContent = true
			ok = knownContent(value)
		case "resultType":
			ok = false // not ours to relay: the SDK sets its own
		}
		b.members = append(b.members, member)
		b.size += len(member)
		return ok
	})
	if !ok || !hasContent {
		return nil
	}
	b.whole = wholeWithout(result, all, meta)
	return b
}

// wholeWithout returns obj (an object whose members are all, sub-slices of
// it) without member drop, when that takes no copy: obj itself when drop
// is -1; when it is the first or the last member, the rest of obj, the
// comma next to the dropped member overwritten with a brace. Otherwise nil.
func wholeWithout(obj []byte, all [][]byte, drop int) []byte {
	offset := func(m []byte) int { return cap(obj) - cap(m) }
	switch {
	case drop < 0:
		return obj
	case len(all) < 2:
		return nil
	case drop == 0:
		i := bytes.IndexByte(obj[offset(all[0])+len(all[0]):], ',') + offset(all[0]) + len(all[0])
		obj[i] = '{'
		return obj[i:]
	case drop == len(all)-1:
		prev := all[drop-1]
		i := bytes.IndexByte(obj[offset(prev)+len(prev):], ',') + offset(prev) + len(prev)
		obj[i] = '}'
		return obj[:i+1]
	}
	return nil
}

// knownContent reports whether v is an array of content blocks of the
// types the SDK knows.
func knownContent(v []byte) bool {
	if len(v) == 0 || v[0] != '[' {
		return false
	}
	ok := true
	eachElement(v, func(block []byte) bool {
		typ := ""
		if block[0] == '{' {
			eachMember(block, func(name string, _, value []byte) bool {
				if name == "type" {
					typ = jsonString(value)
					return false
				}
				return true
			})
		}
		ok = relayContentTypes[typ]
		return ok
	})
	return ok
}

// stub is the result the SDK decodes in place of a relayed one: no
// content, and the upstream's isError.
func (b *relayBody) stub() json.RawMessage {
	for _, m := range b.members {
		if bytes.HasPrefix(m, []byte(`"isError"`)) {
			return json.RawMessage(`{"content":[],` + string(m) + `}`)
		}
	}
	return json.RawMessage(`{"content":[]}`)
}

// relayed returns res (the stub the SDK decoded) marked for
// relayMiddleware to relay body in its place.
func relayed(res *mcp.CallToolResult, body *relayBody) *mcp.CallToolResult {
	out := *res
	out.Meta = mcp.Meta{relayMetaKey: body}
	return &out
}

// relayMiddleware relays the results run marked (relayed) as rawResults.
// Every server that has execute_tool or a directly listed tool needs it.
// Over a transport that splices (ServeStdio), the upstream's bytes are
// registered for the transport to write and the SDK encodes a placeholder
// (splice.go).
func relayMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		cr, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || cr == nil {
			return res, err
		}
		body, ok := cr.Meta[relayMetaKey].(*relayBody)
		if !ok {
			return res, err
		}
		head := *cr
		head.Meta = nil
		raw := &rawResult{CallToolResult: &head, body: body}
		if sp := splicerFor(ctx, req); sp != nil {
			raw.marker = sp.register(ctx, body)
		}
		return raw, nil
	}
}

// rawResult is a tool result relayed as the upstream's bytes. The embedded
// CallToolResult is what the SDK sees and sets (_meta, resultType).
type rawResult struct {
	*mcp.CallToolResult
	body *relayBody
	// marker names body in the session's splicer: the result is then
	// encoded as a placeholder, which the transport replaces with body.
	marker string
}

// MarshalJSON writes the members the SDK set on the result (its _meta,
// resultType), then the upstream's, or the placeholder member in their
// place.
func (r *rawResult) MarshalJSON() ([]byte, error) {
	head := *r.CallToolResult
	head.Content, head.StructuredContent, head.IsError = nil, nil, false
	hb, err := head.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var sdk [][]byte
	eachMember(hb, func(name string, member, _ []byte) bool {
		switch name {
		case "content", "structuredContent", "isError":
		default:
			sdk = append(sdk, member)
		}
		return true
	})
	if r.marker != "" {
		return placeholder(sdk, r.marker), nil
	}
	if len(sdk) == 0 && r.body.whole != nil {
		return r.body.whole, nil // the common case: no copy
	}
	size := 2 + r.body.size + len(r.body.members) + len(sdk)
	for _, m := range sdk {
		size += len(m)
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	for i, m := range append(sdk, r.body.members...) {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m...)
	}
	return append(out, '}'), nil
}

// lineConn is the client side of a stdio upstream session: an
// mcp.Connection over the lines a frameGuard reads, which it hands the SDK
// without copying them (decodeLine), and keeps large tools/call results
// raw for the calls that ask (relaySlot). Messages go out as the SDK's
// IOTransport writes them, one line each.
type lineConn struct {
	guard *frameGuard
	w     io.WriteCloser

	incoming chan lineRead
	closed   chan struct{}
	once     sync.Once
	closeErr error

	writeMu sync.Mutex

	slotsMu sync.Mutex
	slots   map[jsonrpc.ID]*relaySlot // tools/call requests in flight that take a raw result

	queue []jsonrpc.Message // the rest of a batch; Read's alone
}

type lineRead struct {
	msgs []jsonrpc.Message
	err  error
}

var _ mcp.Connection = (*lineConn)(nil)

func newLineConn(guard *frameGuard, w io.WriteCloser) *lineConn {
	c := &lineConn{guard: guard, w: w, incoming: make(chan lineRead), closed: make(chan struct{}), slots: map[jsonrpc.ID]*relaySlot{}}
	go c.readLines()
	return c
}

// readLines decodes the guard's lines until one fails or the connection
// closes. As with the SDK's IOTransport, a line that is not a JSON-RPC
// message ends the session.
func (c *lineConn) readLines() {
	for {
		line, err := c.guard.nextLine()
		var msgs []jsonrpc.Message
		if err == nil {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			msgs, err = decodeLine(line)
			for i, m := range msgs {
				if r, ok := m.(*jsonrpc.Response); ok {
					msgs[i] = c.keepRaw(r)
				}
			}
		}
		select {
		case c.incoming <- lineRead{msgs: msgs, err: err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// keepRaw moves the result of a tools/call made with a relaySlot into the
// slot when it is large enough (newRelayBody), leaving the SDK a stub.
func (c *lineConn) keepRaw(r *jsonrpc.Response) *jsonrpc.Response {
	c.slotsMu.Lock()
	slot := c.slots[r.ID]
	delete(c.slots, r.ID)
	c.slotsMu.Unlock()
	if slot == nil || r.Error != nil {
		return r
	}
	body := newRelayBody(r.Result)
	if body == nil {
		return r
	}
	slot.body.Store(body)
	return &jsonrpc.Response{ID: r.ID, Result: body.stub()}
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		if r.err != nil {
			return nil, r.err
		}
		c.queue = r.msgs[1:]
		return r.msgs[0], nil
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	var slotID *jsonrpc.ID
	if req, ok := msg.(*jsonrpc.Request); ok {
		switch {
		case req.IsCall() && req.Method == "tools/call":
			if slot := valueFrom[relaySlot](ctx); slot != nil {
				c.slotsMu.Lock()
				c.slots[req.ID] = slot
				c.slotsMu.Unlock()
				slotID = &req.ID
			}
		case req.Method == "notifications/cancelled":
			c.forget(req.Params)
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err == nil {
		data = append(data, '\n')
		c.writeMu.Lock()
		_, err = c.w.Write(data)
		c.writeMu.Unlock()
	}
	if err != nil && slotID != nil {
		c.slotsMu.Lock()
		delete(c.slots, *slotID)
		c.slotsMu.Unlock()
	}
	return err
}

// forget drops the slot of a call the SDK cancelled: its answer may never
// come.
func (c *lineConn) forget(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
		c.slotsMu.Lock()
		delete(c.slots, id)
		c.slotsMu.Unlock()
	}
}

func (c *lineConn) Close() error {
	c.once.Do(func() {
		c.closeErr = c.w.Close()
		close(c.closed)
	})
	return c.closeErr
}

func (c *lineConn) SessionID() string { return "" }

// decodeLine decodes one line (without surrounding whitespace) into the
// messages jsonrpc.DecodeMessage would give, without copying: params and
// results are sub-slices of line.
func decodeLine(line []byte) ([]jsonrpc.Message, error) {
	if !json.Valid(line) {
		return nil, errors.New("unmarshaling jsonrpc message: invalid JSON")
	}
	if line[0] != '[' {
		m, err := decodeMessage(line)
		if err != nil {
			return nil, err
		}
		return []jsonrpc.Message{m}, nil
	}
	var msgs []jsonrpc.Message
	var err error
	eachElement(line, func(v []byte) bool {
		var m jsonrpc.Message
		if m, err = decodeMessage(v); err == nil {
			msgs = append(msgs, m)
		}
		return err == nil
	})
	if err == nil && len(msgs) == 0 {
		err = errors.New("empty batch")
	}
	return msgs, err
}

// decodeMessage is jsonrpc.DecodeMessage over valid JSON, keeping params
// and results as sub-slices of obj.
func decodeMessage(obj []byte) (jsonrpc.Message, error) {
	if obj[0] != '{' {
		return nil, errors.New("unmarshaling jsonrpc message: not an object")
	}
	var version, id, method, params, result, rerr []byte
	eachMember(obj, func(name string, _, value []byte) bool {
		switch name {
		case "jsonrpc":
			version = value
		case "id":
			id = value
		case "method":
			method = value
		case "params":
			params = value
		case "result":
			result = value
		case "error":
			rerr = value
		}
		return true
	})
	if v := jsonString(version); v != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", v, "2.0")
	}
	var idv any
	if id != nil && json.Unmarshal(id, &idv) != nil {
		return nil, errors.New("unmarshaling jsonrpc message: bad id")
	}
	mid, err := jsonrpc.MakeID(idv)
	if err != nil {
		return nil, err
	}
	if method != nil {
		var name string
		if err := json.Unmarshal(method, &name); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{ID: mid, Method: name, Params: params}, nil
	}
	if !mid.IsValid() {
		return nil, errors.New("JSON RPC invalid request: response without an id")
	}
	resp := &jsonrpc.Response{ID: mid, Result: result}
	if rerr != nil && string(rerr) != "null" {
		we, err := decodeError(rerr)
		if err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		resp.Error = we
	}
	return resp, nil
}

// decodeError decodes a JSON-RPC error object, its member names matched
// exactly, as the SDK's decoder does (encoding/json would take "Code").
func decodeError(obj []byte) (*jsonrpc.Error, error) {
	if obj[0] != '{' {
		return nil, errors.New("error is not an object")
	}
	we := &jsonrpc.Error{}
	var err error
	eachMember(obj, func(name string, _, value []byte) bool {
		switch name {
		case "code":
			err = json.Unmarshal(value, &we.Code)
		case "message":
			err = json.Unmarshal(value, &we.Message)
		case "data":
			we.Data = value
		}
		return err == nil
	})
	return we, err
}

// jsonString returns the string the JSON value v holds, or "".
func jsonString(v []byte) string {
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

// The scanners below walk valid JSON (json.Valid said so) without
// allocating: they find where values end.

// eachMember calls fn with the name, the whole member ("name":value, as
// written) and the value of each member of the object obj, until fn
// returns false.
func eachMember(obj []byte, fn func(name string, member, value []byte) bool) {
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		start := i
		nameEnd := skipString(obj, i)
		name := jsonString(obj[start:nameEnd])
		i = skipSpace(obj, nameEnd)
		i = skipSpace(obj, i+1) // past ':'
		vStart := i
		i = skipValue(obj, i)
		if !fn(name, obj[start:i], obj[vStart:i]) {
			return
		}
		i = skipSpace(obj, i)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
}

// eachElement calls fn with each element of the array arr until fn
// returns false.
func eachElement(arr []byte, fn func(v []byte) bool) {
	i := skipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		start := i
		i = skipValue(arr, i)
		if !fn(arr[start:i]) {
			return
		}
		i = skipSpace(arr, i)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string that starts at b[i].
func skipString(b []byte, i int) int {
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
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
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
