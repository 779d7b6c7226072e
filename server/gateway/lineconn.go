package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/rawjson"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/server/relay"
)

// lineConn is the client side of a stdio upstream session: an
// mcp.Connection over the lines a frameGuard reads, which it hands the SDK
// without copying them (decodeLine), and keeps large tools/call results
// raw for the calls that ask (relay.Slot). Messages go out as the SDK's
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
	slots   map[jsonrpc.ID]*relay.Slot // tools/call requests in flight that take a raw result

	// secrets are looked for in a result before it is kept raw: one
	// that holds any takes the SDK's path, where Execute redacts it.
	secrets *redact.Redactor

	queue []jsonrpc.Message // the rest of a batch; Read's alone

	// mark, when set, marks each request and notification read with the
	// call it belongs to, before the SDK sees it (commandTransport.mark).
	mark func(*jsonrpc.Request)
}

type lineRead struct {
	msgs []jsonrpc.Message
	err  error
}

var _ mcp.Connection = (*lineConn)(nil)

func newLineConn(guard *frameGuard, w io.WriteCloser, secrets *redact.Redactor, mark func(*jsonrpc.Request)) *lineConn {
	c := &lineConn{guard: guard, w: w, secrets: secrets, mark: mark, incoming: make(chan lineRead), closed: make(chan struct{}), slots: map[jsonrpc.ID]*relay.Slot{}}
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
				switch m := m.(type) {
				case *jsonrpc.Response:
					msgs[i] = c.keepRaw(m)
				case *jsonrpc.Request:
					if c.mark != nil {
						c.mark(m)
					}
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

// keepRaw moves the result of a tools/call made with a relay.Slot into
// the slot when it is to be relayed raw (Slot.Keep), leaving the SDK a
// stub. A result holding a secret (as written, or escaped as JSON
// strings are by Go: not every escape a JSON encoder may write) is not
// kept.
func (c *lineConn) keepRaw(r *jsonrpc.Response) *jsonrpc.Response {
	c.slotsMu.Lock()
	slot := c.slots[r.ID]
	delete(c.slots, r.ID)
	c.slotsMu.Unlock()
	if slot == nil || r.Error != nil || c.secrets.ContainsJSON(r.Result) {
		return r
	}
	stub, ok := slot.Keep(r.Result)
	if !ok {
		return r
	}
	return &jsonrpc.Response{ID: r.ID, Result: stub}
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
			if slot := relay.SlotFrom(ctx); slot != nil {
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
	rawjson.EachElement(line, func(v []byte) bool {
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
	rawjson.EachMember(obj, func(name string, _, value []byte) bool {
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
	if v := rawjson.String(version); v != "2.0" {
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
	rawjson.EachMember(obj, func(name string, _, value []byte) bool {
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
