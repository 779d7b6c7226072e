package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"sync"
	"sync/atomic"
)

// Over toolscout's stdio transport a large relayed result (relay.go) does
// not pass through the SDK's encoder at all. The go-sdk (v1.8.0) encodes
// every response twice (jsonrpc2.NewResponse, then EncodeMessage), each
// time compacting the result into an encoder buffer and copying it into a
// bytes.Buffer; for a 60 MiB result that was three allocations of its size
// on top of the upstream's line. Instead:
//
//   - ServeStdio runs the session with a splicer in its context, which
//     reaches every handler and middleware of the session.
//   - relayMiddleware registers the upstream's bytes in the splicer under
//     a fresh marker (128 random bits) and the SDK encodes a placeholder
//     in their place: the result's own members (the _meta and resultType
//     the SDK sets) followed by "io.toolscout/relay#MARKER":0, a few dozen
//     bytes.
//   - stdioWriter, about to write that response line, takes the bytes
//     registered under the marker and writes the line's head, the
//     upstream's members (compacted on the way, as the SDK's encoder would)
//     and the closing braces: byte for byte the line the SDK would have
//     written, without ever joining it.
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

// placeholderTail ends a response line whose result is a placeholder, after
// the marker: the member's value, the result's and the line's braces.
const placeholderTail = `":0}}` + "\n"

// splicer holds the relayed results of one stdio connection between the
// handler returning them and stdioWriter writing them.
type splicer struct {
	mu      sync.Mutex
	bodies  map[string]*relayBody
	closed  bool
	spliced atomic.Int64 // results written in place of their placeholder
}

func newSplicer() *splicer { return &splicer{bodies: map[string]*relayBody{}} }

// register keeps body under a new marker until ctx ends, and returns the
// marker; "" when the connection is closed (the result then takes the
// encoder's path).
func (sp *splicer) register(ctx context.Context, body *relayBody) string {
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
func (sp *splicer) take(marker string) *relayBody {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	b := sp.bodies[marker]
	delete(sp.bodies, marker)
	return b
}

// close releases every registered result and refuses new ones.
func (sp *splicer) close() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.closed = true
	clear(sp.bodies)
}

// pending returns how many results are registered.
func (sp *splicer) pending() int {
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

// placeholderIn returns the marker of line when it is a response the SDK
// wrote for a placeholder result: an answer in the SDK's layout whose
// result ends with the placeholder member.
func placeholderIn(line []byte) (string, bool) {
	n := len(line) - len(placeholderTail) - markerLen - 2 // the byte before the member's quote
	if n < len(sdkIDPrefix) || !bytes.HasSuffix(line, []byte(placeholderTail)) || !bytes.HasPrefix(line, sdkIDPrefix) {
		return "", false
	}
	if line[n] != ',' && line[n] != '{' || line[n+1] != '"' || !bytes.HasPrefix(line[n+2:], []byte(relayMarkerPrefix)) {
		return "", false
	}
	start := len(sdkIDPrefix)
	end := start + tokenLen(line[start:])
	if !bytes.HasPrefix(line[end:], []byte(`,"result":{`)) {
		return "", false
	}
	return string(line[n+2 : n+2+markerLen]), true
}

// releasedAnswer is the answer to the call of line (a placeholder response)
// whose result was released before it could be written.
func releasedAnswer(line []byte) []byte {
	start := len(sdkIDPrefix)
	end := start + tokenLen(line[start:])
	out := append([]byte(nil), line[:end]...)
	return append(out, `,"error":{"code":-32603,"message":"toolscout: the result of this call was released before it was written: the call was cancelled or the connection is closing"}}`+"\n"...)
}

// writeSpliced writes line (a placeholder response, its id already as the
// client sent it) with body in place of the placeholder member.
func writeSpliced(w io.Writer, line []byte, body *relayBody) error {
	head := line[:len(line)-len(placeholderTail)-markerLen-1] // through the result's '{' or the ',' after the SDK's members
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	for i, m := range body.members {
		if i > 0 {
			bw.WriteByte(',')
		}
		writeCompact(bw, m)
	}
	bw.WriteString("}}\n")
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
			i = skipString(v, i)
		case ' ', '\t', '\n', '\r':
			w.Write(v[start:i])
			i = skipSpace(v, i)
			start = i
		default:
			i++
		}
	}
	w.Write(v[start:])
}
