package relay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/rawjson"
)

// Over toolscout's stdio transport a large relayed result (relay.go) does
// not pass through the SDK's encoder at all. The go-sdk (v1.8.0) encodes
// every response twice (jsonrpc2.NewResponse, then EncodeMessage), each
// time compacting the result into an encoder buffer and copying it into a
// bytes.Buffer; for a 60 MiB result that was three allocations of its size
// on top of the upstream's line. Instead:
//
//   - server.ServeStdio runs the session with a Splicer in its context
//     (WithSplicer), which reaches every handler and middleware of the
//     session.
//   - Middleware registers the upstream's bytes in the splicer under a
//     fresh marker (128 random bits) and the SDK encodes a placeholder in
//     their place: the result's own members (the _meta and resultType the
//     SDK sets) followed by "io.toolscout/relay#MARKER":0, a few dozen
//     bytes.
//   - server/stdio's writer, about to write that response line, takes the
//     bytes registered under the marker (Take) and writes the line's head,
//     the upstream's members (compacted on the way, as the SDK's encoder
//     would) and the closing braces (Write): byte for byte the line the
//     SDK would have written, without ever joining it.
//
// Only a line whose result ends with the placeholder member is spliced:
// no result the SDK encodes has a member of that name at its top level,
// and a marker is never written anywhere, so no content (an upstream's
// text, a client's arguments) can name another call's bytes. A marker not
// registered (released) gets an error answer, never a placeholder. A
// placeholder is found only in a line of one response: the stdio guard
// refuses batches, so the SDK never writes an answer inside a batch line.
//
// Registered bytes are released when the call's context ends: the SDK
// cancels it right after writing the answer (or failing to), when the
// client cancels the call, and when the connection ends. A call whose
// context ended before its answer was written (the client cancelled it in
// that moment) is answered with an error instead of the result.

// relayMarkerPrefix starts the name of the placeholder member.
const relayMarkerPrefix = "io.toolscout/relay#"

// markerLen is the length of a marker: the prefix and 32 hex digits.
const markerLen = len(relayMarkerPrefix) + 32

// placeholderTail ends a response whose result is a placeholder, after the
// marker: the member's value, the result's and the message's braces.
const placeholderTail = `":0}}`

// A Splicer holds the relayed results of one connection (server/stdio's)
// or one POST (SpliceHTTP) between Middleware registering them and the
// transport writing them in place of their placeholder.
type Splicer struct {
	mu      sync.Mutex
	bodies  map[string]*Body
	closed  bool
	spliced atomic.Int64 // results written in place of their placeholder
}

// NewSplicer returns an empty Splicer. Close it when its connection ends.
func NewSplicer() *Splicer { return &Splicer{bodies: map[string]*Body{}} }

// WithSplicer returns ctx carrying sp: Middleware registers the results of
// the calls served with it there, for the transport to splice.
func WithSplicer(ctx context.Context, sp *Splicer) context.Context {
	return withValue(ctx, sp)
}

// register keeps body under a new marker until ctx ends, and returns the
// marker; "" when the connection is closed (the result then takes the
// encoder's path).
func (sp *Splicer) register(ctx context.Context, body *Body) string {
	var r [16]byte
	rand.Read(r[:]) // never fails (crypto/rand)
	marker := relayMarkerPrefix + hex.EncodeToString(r[:])
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.closed {
		return ""
	}
	sp.bodies[marker] = body
	context.AfterFunc(ctx, func() { sp.take(marker) })
	return marker
}

// take removes and returns the bytes registered under marker, or nil.
func (sp *Splicer) take(marker string) *Body {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	b := sp.bodies[marker]
	delete(sp.bodies, marker)
	return b
}

// Close releases every registered result and refuses new ones.
func (sp *Splicer) Close() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.closed = true
	clear(sp.bodies)
}

// Pending returns how many results are registered.
func (sp *Splicer) Pending() int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return len(sp.bodies)
}

// placeholder is the result the SDK encodes for a relayed one: the members
// it set on the result (sdk), then the placeholder member of marker.
func placeholder(sdk [][]byte, marker string) []byte {
	out := []byte{'{'}
	for _, m := range sdk {
		out = append(append(out, m...), ',')
	}
	out = append(out, '"')
	out = append(out, marker...)
	return append(out, `":0}`...)
}

// Spliced returns how many results were written in place of their
// placeholder (Write), counting each from before its first byte: an
// answer a client has read is counted, and so is one whose write failed.
func (sp *Splicer) Spliced() int64 { return sp.spliced.Load() }

// Take returns the result that msg (one JSON-RPC message the SDK wrote,
// without its line break) stands for, removing it from sp: ok is false
// when msg is not a placeholder answer, and body is nil when its result
// was released (then write Released(msg) instead).
func (sp *Splicer) Take(msg []byte) (body *Body, ok bool) {
	marker, ok := placeholderIn(msg)
	if !ok {
		return nil, false
	}
	return sp.take(marker), true
}

// placeholderIn returns the marker of msg (one JSON-RPC message, without
// a line break) when it is a response the SDK wrote for a placeholder
// result: an answer in the SDK's layout whose result ends with the
// placeholder member.
func placeholderIn(msg []byte) (string, bool) {
	n := len(msg) - len(placeholderTail) - markerLen - 2 // the byte before the member's quote
	start, end, ok := rawjson.SDKID(msg)
	if !ok || n < start || !bytes.HasSuffix(msg, []byte(placeholderTail)) {
		return "", false
	}
	if msg[n] != ',' && msg[n] != '{' || msg[n+1] != '"' || !bytes.HasPrefix(msg[n+2:], []byte(relayMarkerPrefix)) {
		return "", false
	}
	if !bytes.HasPrefix(msg[end:], []byte(`,"result":{`)) {
		return "", false
	}
	return string(msg[n+2 : n+2+markerLen]), true
}

// Released is the answer to the call of msg (a placeholder answer) whose
// result was released before it could be written.
func Released(msg []byte) []byte {
	_, end, _ := rawjson.SDKID(msg)
	out := append([]byte(nil), msg[:end]...)
	return append(out, `,"error":{"code":-32603,"message":"toolscout: the result of this call was released before it was written: the call was cancelled or the connection is closing"}}`...)
}

// Write writes msg (a placeholder answer, its id already as the client
// sent it) with body in place of the placeholder member, then end (what
// follows the message: a line break, an event's blank line). It counts
// the result in Spliced before writing its first byte, so that whoever
// has read the answer sees it counted.
func (sp *Splicer) Write(w io.Writer, msg []byte, body *Body, end string) error {
	sp.spliced.Add(1)
	return writeSpliced(w, msg, body, end)
}

func writeSpliced(w io.Writer, msg []byte, body *Body, end string) error {
	head := msg[:len(msg)-len(placeholderTail)-markerLen-1] // through the result's '{' or the ',' after the SDK's members
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	for i, m := range body.members {
		if i > 0 {
			bw.WriteByte(',')
		}
		writeCompact(bw, m)
	}
	bw.WriteString("}}")
	bw.WriteString(end)
	return bw.Flush()
}

// writeCompact writes the valid JSON v without the whitespace between its
// tokens, as encoding/json's encoder writes a json.Marshaler's output: in
// runs, strings whole, without a copy of v.
func writeCompact(w *bufio.Writer, v []byte) {
	start := 0
	for i := 0; i < len(v); {
		switch v[i] {
		case '"':
			i = rawjson.SkipString(v, i)
		case ' ', '\t', '\n', '\r':
			w.Write(v[start:i])
			i = rawjson.SkipSpace(v, i)
			start = i
		default:
			i++
		}
	}
	w.Write(v[start:])
}

// Over HTTP (server.HTTPHandler), each POST gets a splicer of its own:
// SpliceHTTP
// registers it under a fresh token, names the token in the request's
// spliceHeader (a client's own value of that header is dropped), and wraps
// the response writer; Middleware finds the splicer through the
// header, which the SDK hands to handlers (RequestExtra.Header). The SDK
// writes a response on the stream of the POST that carried its call, in
// one Write: an SSE event ("event: message\nid: …\ndata: MSG\n\n") or, in
// JSON mode, MSG alone. toolscout configures no event store, so an answer
// is never replayed on another request's stream; were one to reach a
// writer of another splicer, its marker would not be found there and the
// answer would be an error, never a placeholder or another call's bytes.

// spliceHeader names, on a POST served through SpliceHTTP, the token of its
// response's splicer.
const spliceHeader = "X-Toolscout-Splice"

// httpSplicers holds the splicers of the POSTs being served, by token;
// splicedHTTP counts the results written in place of their placeholder,
// each from before its first byte.
var (
	httpSplicers sync.Map
	splicedHTTP  atomic.Int64
)

// HTTPStats returns how many POSTs SpliceHTTP is serving (each has a
// splicer) and how many results it wrote in place of their placeholder,
// in all.
func HTTPStats() (serving int, spliced int64) {
	httpSplicers.Range(func(any, any) bool { serving++; return true })
	return serving, splicedHTTP.Load()
}

// SpliceHTTP wraps h so that the large relayed results of each POST are
// written into its response as the upstream's bytes.
func SpliceHTTP(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			r.Header.Del(spliceHeader)
			h.ServeHTTP(w, r)
			return
		}
		sp := NewSplicer()
		token := rand.Text()
		httpSplicers.Store(token, sp)
		defer func() {
			httpSplicers.Delete(token)
			sp.Close()
		}()
		r = r.Clone(r.Context())
		r.Header.Set(spliceHeader, token)
		h.ServeHTTP(&spliceWriter{ResponseWriter: w, sp: sp, log: log}, r)
	})
}

// splicerFor returns the splicer of the connection or the POST that
// carried req: over server/stdio the context's, over SpliceHTTP the one
// its header names; nil over other transports.
func splicerFor(ctx context.Context, req mcp.Request) *Splicer {
	if sp := valueFrom[Splicer](ctx); sp != nil {
		return sp
	}
	if req == nil {
		return nil
	}
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return nil
	}
	token := extra.Header.Get(spliceHeader)
	if token == "" {
		return nil
	}
	sp, _ := httpSplicers.Load(token)
	s, _ := sp.(*Splicer)
	return s
}

// spliceWriter writes a POST's response, each placeholder answer with its
// relayed result in place.
type spliceWriter struct {
	http.ResponseWriter
	sp  *Splicer
	log *slog.Logger
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (w *spliceWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush sends what was written.
func (w *spliceWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

var sseData = []byte("data: ")

// Write writes p, one SSE event or one JSON-RPC message, splicing in the
// result of a placeholder answer.
func (w *spliceWriter) Write(p []byte) (int, error) {
	head, msg, end := p[:0], p, ""
	if len(p) > 0 && p[0] != '{' {
		// An SSE event: its data line holds the message.
		i := bytes.Index(p, sseData)
		if i < 0 || (i > 0 && p[i-1] != '\n') || !bytes.HasSuffix(p, []byte("\n\n")) {
			return w.ResponseWriter.Write(p)
		}
		head, msg, end = p[:i+len(sseData)], p[i+len(sseData):len(p)-2], "\n\n"
	}
	body, ok := w.sp.Take(msg)
	if !ok {
		return w.ResponseWriter.Write(p)
	}
	if body == nil {
		w.log.Warn("http: a relayed tool result was released before its answer was written (the call was cancelled or the request ended); answered with an error")
		out := append(append(append([]byte(nil), head...), Released(msg)...), end...)
		if _, err := w.ResponseWriter.Write(out); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	splicedHTTP.Add(1) // before the first byte, as Splicer.Write counts
	if _, err := w.ResponseWriter.Write(head); err != nil {
		return 0, err
	}
	if err := w.sp.Write(w.ResponseWriter, msg, body, end); err != nil {
		return 0, err
	}
	return len(p), nil
}
