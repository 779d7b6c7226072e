package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A Streamable HTTP server sends the requests and notifications of a
// call on the response stream of the call's POST (the specification's
// "related" messages), but the go-sdk client hands them to its handlers
// without saying on which stream they came. routeTagger is the body of
// such a response: it marks each request and notification in it with the
// call's route (routeMetaKey in the params' _meta) as the go-sdk reads
// it, and counts the notifications, so that the call waits for them to be
// passed on before its result is (callRoute.drain). Lines too long for
// its buffer that are not requests (large results) pass through as they
// are, unbuffered.
type routeTagger struct {
	rt    *routes
	route *callRoute
	body  io.ReadCloser
	r     *bufio.Reader
	out   []byte
	long  bool // passing the rest of a long line through
	err   error
}

// taggerBuffer is the line buffer of a routeTagger: a line longer than
// this that looks like a response is passed through without buffering.
const taggerBuffer = 4 << 10

func newRouteTagger(rt *routes, route *callRoute, body io.ReadCloser) *routeTagger {
	return &routeTagger{rt: rt, route: route, body: body, r: bufio.NewReaderSize(body, taggerBuffer)}
}

func (t *routeTagger) Close() error { return t.body.Close() }

func (t *routeTagger) Read(p []byte) (int, error) {
	for len(t.out) == 0 {
		if t.err != nil {
			return 0, t.err
		}
		t.fill()
	}
	n := copy(p, t.out)
	t.out = t.out[n:]
	return n, nil
}

// fill reads the next line (or chunk of a long one) into out.
func (t *routeTagger) fill() {
	chunk, err := t.r.ReadSlice('\n')
	if t.long {
		t.out = chunk
		t.long = err == bufio.ErrBufferFull
		if err != nil && err != bufio.ErrBufferFull {
			t.err = err
		}
		return
	}
	if err == bufio.ErrBufferFull {
		if !bytes.HasPrefix(chunk, []byte("data:")) || !bytes.Contains(chunk, []byte(`"method"`)) {
			t.out, t.long = chunk, true // a result: as it is
			return
		}
		// A long request or notification: the whole line.
		line := append([]byte(nil), chunk...)
		for err == bufio.ErrBufferFull && len(line) <= t.rt.maxMessage {
			chunk, err = t.r.ReadSlice('\n')
			line = append(line, chunk...)
		}
		chunk = line
	}
	if err != nil && err != bufio.ErrBufferFull {
		t.err = err
	}
	if bytes.HasPrefix(chunk, []byte("data:")) && bytes.Contains(chunk, []byte(`"method"`)) {
		chunk = t.tag(chunk)
	}
	t.out = chunk
}

// tag returns the SSE data line with the message in it marked with the
// route, or the line as it is when it holds no request or notification.
func (t *routeTagger) tag(line []byte) []byte {
	data := bytes.TrimSpace(bytes.TrimPrefix(line, []byte("data:")))
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return line
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return line
	}
	if !t.rt.mark(req, t.route) {
		return line
	}
	b, err := jsonrpc.EncodeMessage(req)
	if err != nil {
		return line
	}
	out := make([]byte, 0, len(b)+8)
	out = append(out, "data: "...)
	out = append(out, b...)
	return append(out, '\n')
}

// mark marks req (a request or notification of an upstream) as route's,
// in its params' _meta, and counts it when it is a notification the
// route passes on; it reports whether it changed req. A progress
// notification is the route's of its token (whatever stream it came on).
func (rt *routes) mark(req *jsonrpc.Request, route *callRoute) bool {
	switch req.Method {
	case "notifications/progress":
		var p struct {
			Token any `json:"progressToken"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return false
		}
		id, _ := p.Token.(string)
		rt.mu.Lock()
		r := rt.byID[id]
		rt.mu.Unlock()
		if r != nil && r.token != nil {
			r.add()
		}
		return false // routed by its token
	case "notifications/message", "sampling/createMessage", "elicitation/create", "roots/list":
	default:
		return false
	}
	if route == nil && !bytes.Contains(req.Params, []byte(routeMetaKey)) {
		return false
	}
	// Without a route, a mark the server wrote itself is removed: the
	// server does not choose the client (the progress token it was sent
	// is a route's id).
	var params map[string]json.RawMessage
	if len(req.Params) > 0 && json.Unmarshal(req.Params, &params) != nil {
		return false
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	meta := map[string]any{}
	if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return false
	}
	if meta == nil {
		meta = map[string]any{}
	}
	if route != nil {
		meta[routeMetaKey] = route.id + "." + route.key
	} else {
		delete(meta, routeMetaKey)
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return false
	}
	params["_meta"] = raw
	b, err := json.Marshal(params)
	if err != nil {
		return false
	}
	req.Params = b
	if route != nil && !req.IsCall() {
		route.add()
	}
	return true
}

// pending counts the notifications of a call read but not yet passed on.
type pending struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n is back to 0
}

// add counts a notification read for the route.
func (r *callRoute) add() {
	r.pend.mu.Lock()
	if r.pend.n == 0 {
		r.pend.idle = make(chan struct{})
	}
	r.pend.n++
	r.pend.mu.Unlock()
}

// done counts one passed on (or dropped).
func (r *callRoute) done() {
	r.pend.mu.Lock()
	if r.pend.n > 0 {
		r.pend.n--
		if r.pend.n == 0 {
			close(r.pend.idle)
		}
	}
	r.pend.mu.Unlock()
}

// drainWait bounds how long a call's result waits for its notifications.
const drainWait = time.Second

// drain waits until the notifications of the call read before its
// result are passed on (at most drainWait): the go-sdk hands them to the
// handlers on another goroutine than the one the result comes back on.
func (r *callRoute) drain() {
	r.pend.mu.Lock()
	idle := r.pend.idle
	n := r.pend.n
	r.pend.mu.Unlock()
	if n == 0 {
		return
	}
	t := time.NewTimer(drainWait)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-r.ctx.Done():
	}
}

// markStdio marks a request or notification read from domain's stdio
// connection: nothing on the wire says which call it belongs to, so it
// is the call's of the one client whose calls run on the server, if one
// (soleRoute).
//
// A progress notification is not marked: it finds its call by its token
// (forwardProgress), which is the call's route id; it is counted here, as
// it is read, so that the call's result waits for it to be passed on
// (drain) like the call's other notifications: the go-sdk hands it to
// forwardProgress on another goroutine than the result's.
func (rt *routes) markStdio(domain string, req *jsonrpc.Request) {
	if req.Method == "notifications/progress" {
		rt.mark(req, nil)
		if r := rt.progressRoute(req); r != nil && r.token != nil {
			r.add()
		}
		return
	}
	route, _ := rt.soleRoute(domain)
	rt.mark(req, route)
}

// progressRoute returns the call a progress notification's token names
// (forwardProgress finds it the same way), or nil.
func (rt *routes) progressRoute(req *jsonrpc.Request) *callRoute {
	var p struct {
		Token any `json:"progressToken"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return nil
	}
	id, _ := p.Token.(string)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.byID[id]
}
