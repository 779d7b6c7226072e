package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/internal/rawjson"
)

// MinSize is the size from which a tool result is relayed raw. Smaller
// results take the SDK's path, which checks every content block.
const MinSize = 256 << 10

// metaKey marks, in the _meta of a result Slot.Mark returns, the raw
// body Middleware relays in its place.
const metaKey = "io.toolscout/relay"

// A Slot receives the raw result of the tools/call made with it in its
// context (WithSlot), when the upstream's connection kept that result raw
// (Keep). The zero Slot is empty and ready.
type Slot struct{ body atomic.Pointer[Body] }

// ctxKey is the key under which a context carries a *T: a Slot, a
// Splicer.
type ctxKey[T any] struct{}

func withValue[T any](ctx context.Context, v *T) context.Context {
	return context.WithValue(ctx, ctxKey[T]{}, v)
}

// valueFrom returns the *T ctx carries, or nil.
func valueFrom[T any](ctx context.Context) *T {
	v, _ := ctx.Value(ctxKey[T]{}).(*T)
	return v
}

// WithSlot returns ctx carrying slot: a tools/call made with it may leave
// its result in slot.
func WithSlot(ctx context.Context, slot *Slot) context.Context {
	return withValue(ctx, slot)
}

// SlotFrom returns the Slot ctx carries, or nil: the call made with ctx
// does not take a raw result.
func SlotFrom(ctx context.Context) *Slot { return valueFrom[Slot](ctx) }

// Keep keeps result (a tools/call result as the upstream sent it, valid
// JSON) in the slot when it is to be relayed raw, and returns the stub
// the SDK should decode in its place; ok is false (and the slot left
// empty) when result takes the SDK's path: it is small, or not a result
// the SDK would relay as is. result must not change afterwards: the
// relayed answer is made of sub-slices of it.
func (s *Slot) Keep(result []byte) (stub json.RawMessage, ok bool) {
	body := newRelayBody(result)
	if body == nil {
		return nil, false
	}
	s.body.Store(body)
	return body.stub(), true
}

// MoveTo moves what s kept to dst (nil: nothing), for a call whose
// result is answered on another request than the one it was made for (a
// bridged call, server/gateway).
func (s *Slot) MoveTo(dst *Slot) {
	if s == nil || dst == nil || s == dst {
		return
	}
	if body := s.body.Swap(nil); body != nil {
		dst.body.Store(body)
	}
}

// Mark returns res (the stub the SDK decoded for the call made with the
// slot) marked for Middleware to relay the kept result in its place, or
// res itself when the slot kept nothing.
func (s *Slot) Mark(res *mcp.CallToolResult) *mcp.CallToolResult {
	body := s.body.Load()
	if body == nil || res == nil {
		return res
	}
	out := *res
	out.Meta = mcp.Meta{metaKey: body}
	return &out
}

// MarkedSize returns the size in bytes of the result res relays, when
// Slot.Mark marked it: the upstream's result less its _meta, without
// the members the SDK adds. ok is false for a result not marked.
func MarkedSize(res *mcp.CallToolResult) (n int, ok bool) {
	if res == nil {
		return 0, false
	}
	body, ok := res.Meta[metaKey].(*Body)
	if !ok {
		return 0, false
	}
	return 2 + body.size + max(len(body.members)-1, 0), true
}

// Body is an upstream's tools/call result as the bytes it sent: the
// members to relay, in order, each a sub-slice of the upstream's line
// (name and value, as written). The upstream's _meta is not among them.
type Body struct {
	members [][]byte
	size    int // sum of the members' lengths
	// whole is the result less its _meta as one object, made in place in
	// the upstream's line (nil when its _meta is neither first nor last):
	// what rawResult writes when the SDK adds no member.
	whole []byte
}

// MarshalJSON refuses: a Body left in a result's _meta means the
// result did not pass Middleware, and relaying an empty result in
// its place would lose the answer silently.
func (*Body) MarshalJSON() ([]byte, error) {
	return nil, errors.New("toolscout: a relayed tool result reached the encoder without relay.Middleware")
}

// relayContentTypes are the content blocks a CallToolResult may hold, as
// the SDK decodes them: a result with any other block takes the SDK's
// path, which answers it with an error.
var relayContentTypes = map[string]bool{"text": true, "image": true, "audio": true, "resource_link": true, "resource": true}

// newRelayBody returns result as a Body, or nil when it is small or
// not a result the SDK would relay as is: an object with a content array
// of known blocks, whose members are named once each.
func newRelayBody(result []byte) *Body {
	if len(result) < MinSize || result[0] != '{' {
		return nil
	}
	b := &Body{}
	seen := map[string]bool{}
	ok := true
	hasContent := false
	meta := -1 // index of _meta among the members
	var all [][]byte
	rawjson.EachMember(result, func(name string, member, value []byte) bool {
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
	rawjson.EachElement(v, func(block []byte) bool {
		typ := ""
		if block[0] == '{' {
			rawjson.EachMember(block, func(name string, _, value []byte) bool {
				if name == "type" {
					typ = rawjson.String(value)
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
func (b *Body) stub() json.RawMessage {
	for _, m := range b.members {
		if bytes.HasPrefix(m, []byte(`"isError"`)) {
			return json.RawMessage(`{"content":[],` + string(m) + `}`)
		}
	}
	return json.RawMessage(`{"content":[]}`)
}

// Middleware relays the results Slot.Mark marked as rawResults. Every
// server that has execute_tool or a directly listed tool needs it. Over a
// transport that splices (server/stdio's, SpliceHTTP), the upstream's
// bytes are registered for the transport to write and the SDK encodes a
// placeholder (splice.go).
func Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		cr, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || cr == nil {
			return res, err
		}
		body, ok := cr.Meta[metaKey].(*Body)
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
	body *Body
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
	rawjson.EachMember(hb, func(name string, member, _ []byte) bool {
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
