// Package relay passes a large tool result from an upstream server to the
// client as the bytes the upstream sent, instead of decoding it into the
// SDK's types and encoding it again (issue 26).
//
// Its place: between the gateway and toolscout's transports, owning the
// one thing they hand each other. The server's execute_tool puts a [Slot]
// in the context of the call it makes (WithSlot); the upstream's
// connection (server/gateway) keeps a large result in that slot
// ([Slot.Keep]) and lets the SDK decode a stub; the server marks the stub
// it answers ([Slot.Mark]) and [Middleware] turns the mark into a result
// that marshals as the upstream's bytes. Over toolscout's own stdio
// transport (server/stdio) and over HTTP ([SpliceHTTP]), a [Splicer] lets
// the transport write those bytes in place of a placeholder the SDK
// encodes, so that they never pass through the SDK's encoder. It knows
// nothing of tools, catalogs or upstream sessions.
//
//	slot := &relay.Slot{}
//	res, err := exec.Execute(relay.WithSlot(ctx, slot), req, t, args)
//	return slot.Mark(res), err // with relay.Middleware on the server
//
// Relaying a tool result used to cost 13 to 17 times its size in peak
// memory and allocate 33 times it: the SDK's stdio transport grew each
// upstream line in a json.Decoder (kept for the session's life), copied it
// out, decoded it into a JSON-RPC message (two more copies), decoded the
// result into Content strings (two more), and the server side marshalled
// it back at four nested levels, each with its own buffers. A large result
// now goes through as the bytes the upstream sent:
//
//   - The client side of a stdio upstream session (server/gateway) hands
//     the SDK each line it read (twice the line's size allocated in all)
//     without copying it: members of a message are sub-slices of the line.
//   - A tools/call made with a Slot in its context whose result is at
//     least [MinSize] bytes is kept raw in the slot, and the SDK decodes a
//     stub in its place ({"content":[]} and isError).
//   - Slot.Mark marks the stub the server returns with the raw body
//     (metaKey), and Middleware turns it into a rawResult, which marshals
//     as the upstream's result less its _meta (in place in the line, no
//     copy), with the members the SDK adds (the new protocol's _meta
//     serverInfo and resultType) in front (one copy).
//
// Over any transport of the SDK's, what remains are the copies the SDK's
// JSON-RPC layer makes of any response it sends: compacted into an
// encoder's buffer, written into a bytes.Buffer, twice
// (jsonrpc2.NewResponse, then EncodeMessage); three allocations of the
// result's size, one encoder buffer being pooled. Over toolscout's stdio
// transport and over HTTP the result skips the encoder: the transport
// writes the upstream's bytes in place of a placeholder (splice.go). See
// BENCHMARKS.md, "Relaying large results (issue 26)".
package relay
