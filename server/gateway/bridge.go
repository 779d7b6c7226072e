package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/relay"
)

// A client of the 2026-07-28 protocol cannot be asked anything in the
// middle of a call: a server asks it with an input-required result, and
// the client answers by calling again (SEP-2322). A 2025-11-25 server
// asks with a request (sampling/createMessage, elicitation/create,
// roots/list) and waits for the answer. Between the two, a bridge: the
// server's call runs on while toolscout answers the client's call with
// an input-required result holding the server's request (under the key
// bridgeInput) and a requestState naming the bridge; the client's retry
// with inputResponses answers the server's request, and waits for the
// server's next request or its result. The requestState is the capability:
// its key is never sent to the server, and a bridge that is not retried
// within the server's timeout is cancelled.

// bridgeInput is the key of the input request a bridge hands the client.
const bridgeInput = "toolscout"

// bridgeState begins the requestState of a bridge.
const bridgeState = "toolscout-bridge:"

type bridge struct {
	id, key string
	domain  string
	tool    string
	ctx     context.Context // the server's call's: ends with it
	cancel  context.CancelFunc
	asks    chan *bridgeAsk
	done    chan bridgeEnd
	caps    *mcp.ClientCapabilities // the client's
	wait    time.Duration           // how long a retry may take: the server's timeout

	mu      sync.Mutex
	pending *bridgeAsk  // handed to the client, not answered yet
	expire  *time.Timer // cancels the bridge when the client does not retry
}

type bridgeAsk struct {
	params mcp.InputRequest
	answer chan mcp.InputResponse
}

type bridgeEnd struct {
	res *mcp.CallToolResult
	err error
}

// mustBridge reports whether a call of req's client to session's server
// needs a bridge: the client cannot be asked in the middle of a call,
// and the server would ask with a request.
func mustBridge(req *mcp.CallToolRequest, session *mcp.ClientSession) bool {
	ip := req.Session.InitializeParams()
	if ip == nil || ip.ProtocolVersion < newProtocol {
		return false
	}
	// A bridge runs the server's call on a goroutine of its own, which a
	// plain call pays for (BenchmarkExecutePlain: about 10% of p50 over
	// HTTP): only a client that can answer sampling or elicitation gets
	// one. (Roots alone, which the go-sdk's clients declare by default,
	// do not make one.)
	if c := ip.Capabilities; c == nil || (c.Sampling == nil && c.Elicitation == nil) {
		return false
	}
	ir := session.InitializeResult()
	return ir != nil && ir.ProtocolVersion < newProtocol
}

// bridges are the calls waiting for a client's retry, by bridge id.
type bridges struct {
	mu   sync.Mutex
	byID map[string]*bridge
}

// start runs call (the call on domain's server of tool t, which waits
// up to wait) under a bridge and answers the client's call with the
// server's first request or its result; end ends the call's route.
func (bs *bridges) start(ctx context.Context, req *mcp.CallToolRequest, domain string, t *index.Tool, wait time.Duration, route *callRoute, end func(), call func(context.Context) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	// The server's call outlives the client's first call. A large result
	// is kept raw in the first call's slot (relay.Slot, in ctx), and moved
	// to the slot of the call that answers it (resume).
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &bridge{id: newRouteID(), key: newRouteID(), domain: domain, tool: t.Name, ctx: base, cancel: cancel,
		asks: make(chan *bridgeAsk), done: make(chan bridgeEnd, 1), caps: req.Session.InitializeParams().Capabilities, wait: wait}
	route.bridge.Store(b)
	bs.mu.Lock()
	bs.byID[b.id] = b
	bs.mu.Unlock()
	go func() {
		defer cancel()
		res, err := call(base)
		end()
		b.done <- bridgeEnd{res, err}
	}()
	return bs.await(ctx, b)
}

// resume answers the request a bridge handed the client with the
// inputResponses of its retry and waits for what comes next; ok is false
// when req is no retry of a bridge's.
func (bs *bridges) resume(ctx context.Context, req *mcp.CallToolRequest, domain string, t *index.Tool) (res *mcp.CallToolResult, ok bool, err error) {
	if req == nil || req.Params == nil || !strings.HasPrefix(req.Params.RequestState, bridgeState) {
		return nil, false, nil
	}
	id, key, _ := strings.Cut(strings.TrimPrefix(req.Params.RequestState, bridgeState), ".")
	bs.mu.Lock()
	b := bs.byID[id]
	bs.mu.Unlock()
	if b == nil || b.key != key || b.domain != domain || b.tool != t.Name {
		return nil, true, fmt.Errorf("the requestState of this retry names no call of %s waiting for input (it ended, or waited longer than the server's timeout): call the tool again without it", t.QualifiedName)
	}
	answer, given := req.Params.InputResponses[bridgeInput]
	b.mu.Lock()
	a := b.pending
	if a != nil && given {
		b.pending = nil
		if b.expire != nil {
			b.expire.Stop()
		}
	}
	b.mu.Unlock()
	if a == nil {
		return nil, true, fmt.Errorf("the input request of %s was answered already", t.QualifiedName)
	}
	if !given {
		return nil, true, fmt.Errorf("the retry of %s carries no inputResponses[%q]: answer the input request it was given", t.QualifiedName, bridgeInput)
	}
	a.answer <- answer
	res, err = bs.await(ctx, b)
	if res != nil && res.InputRequests == nil {
		relay.SlotFrom(b.ctx).MoveTo(relay.SlotFrom(ctx))
	}
	return res, true, err
}

// await answers the client's call with the server's next request
// (input-required) or its result.
func (bs *bridges) await(ctx context.Context, b *bridge) (*mcp.CallToolResult, error) {
	select {
	case a := <-b.asks:
		b.mu.Lock()
		b.pending = a
		b.expire = time.AfterFunc(b.wait, b.cancel)
		b.mu.Unlock()
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{bridgeInput: a.params}, RequestState: bridgeState + b.id + "." + b.key}, nil
	case e := <-b.done:
		bs.drop(b)
		return e.res, e.err
	case <-ctx.Done():
		b.cancel()
		bs.drop(b)
		return nil, ctx.Err()
	}
}

func (bs *bridges) drop(b *bridge) {
	bs.mu.Lock()
	delete(bs.byID, b.id)
	bs.mu.Unlock()
}

// refused says why the client cannot be asked method, nil when it can.
func (b *bridge) refused(method string) error { return capsRefusal(b.caps, method) }

// capsRefusal is what the go-sdk tells a server that asks a client of
// an older protocol for what its capabilities c do not have, nil when
// they have it.
func capsRefusal(c *mcp.ClientCapabilities, method string) error {
	switch {
	case method == "elicitation/create" && (c == nil || c.Elicitation == nil):
		return errors.New("client does not support elicitation")
	case method == "sampling/createMessage" && (c == nil || c.Sampling == nil):
		return errors.New("client does not support sampling")
	case method == "roots/list" && (c == nil || c.RootsV2 == nil):
		return errors.New("client does not support roots")
	}
	return nil
}

// unbridged is the error for a request to r's client when it has no
// bridge: nil for a client of 2025-11-25 (it is asked directly), the
// refusal for a client of 2026-07-28 without the capability, and else
// nil (the go-sdk says it cannot be asked in the middle of a call).
func unbridged(r *callRoute, method string) error {
	ip := r.ss.InitializeParams()
	if ip == nil || ip.ProtocolVersion < newProtocol {
		return nil
	}
	return capsRefusal(ip.Capabilities, method)
}

// ask hands the server's request to the client (by the client's call
// waiting in bridges.await) and returns its answer.
func (b *bridge) ask(ctx context.Context, method string, params mcp.InputRequest) (mcp.InputResponse, error) {
	if err := b.refused(method); err != nil {
		return nil, err
	}
	a := &bridgeAsk{params: params, answer: make(chan mcp.InputResponse, 1)}
	select {
	case b.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.ctx.Done():
		return nil, errBridgeEnded
	}
	select {
	case r := <-a.answer:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.ctx.Done():
		return nil, errBridgeEnded
	}
}

var errBridgeEnded = errors.New("the client did not answer: its call ended")

// bridgeOf returns the bridge of r, nil when it has none.
func (r *callRoute) bridgeOf() *bridge { return r.bridge.Load() }
