package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolscout/toolscout/internal/rawjson"
	"github.com/toolscout/toolscout/server/relay"
)

// StatelessProtocol is the first MCP protocol version without sessions:
// no initialize handshake, the version and the client's capabilities in
// each request's _meta (SEP-2575), no Mcp-Session-Id (SEP-2567), and the
// routing headers Mcp-Method and Mcp-Name checked against the body
// (SEP-2243). Versions compare as strings (they are dates).
const StatelessProtocol = "2026-07-28"

// protocolHeader is the HTTP header that names a request's protocol
// version.
const protocolHeader = "Mcp-Protocol-Version"

// HTTPOptions configures HTTPHandler.
type HTTPOptions struct {
	// SessionIdle closes a session after this long without a request
	// (never when zero). Requests of the stateless protocol open none.
	SessionIdle time.Duration
	// MaxSessions bounds the open sessions: a request that would start
	// another gets 503 (no bound when zero). Requests of the stateless
	// protocol open none and are not counted.
	MaxSessions int
}

// HTTPHandler serves Streamable HTTP at one endpoint for both protocol
// generations, told apart by the request (statelessRequest):
//
//   - requests of StatelessProtocol or later are served by a stateless
//     handler: every request stands alone, so any replica (or a restarted
//     process) answers any of them. In dynamic mode a request that carries
//     a toolset in _meta (ToolsetMetaKey) is answered by a view with that
//     toolset's domains enabled (the views of the toolsets used last are
//     kept: toolsetViews); other requests by the primary server, whose
//     tools/list is the same for every client.
//   - 2025-11-25 and older clients get sessions (Mcp-Session-Id), as
//     before. In dynamic mode every session gets its own view, so that one
//     client's enable_domain does not change what the others see;
//     otherwise all sessions share the primary server.
//
// The go-sdk asks for the server on every request, not once per session
// (and twice for a request without a session: once to learn the protocol
// versions), and says nothing when a session ends. So a request without
// Mcp-Session-Id (an initialize) gets one view, made before the go-sdk
// sees the request and carried in its context; when the request is
// answered, the view goes to the session it opened, which releases it when
// it ends (DELETE, idle expiry), or is dropped at once. A request naming
// its session gets the primary server: the go-sdk routes it by its session
// id and only reads the server's protocol versions, the same in every view.
func (s *Server) HTTPHandler(o HTTPOptions) http.Handler {
	hh := newHTTPHandler(s.scope, s.expo, s.views, s.start, s.log, o)
	hh.audit = s.meta.audit // calls refused before a handler runs (stepup.go)
	return hh
}

// httpHandler is Server.HTTPHandler: it routes each request to the
// stateless or the session handler of the go-sdk, with the view that
// answers it, and refuses what neither would answer right. It keeps no
// state: the views are the table's (viewTable).
type httpHandler struct {
	scope *callerScope
	expo  *exposure
	views *viewTable
	start *startup
	log   *slog.Logger
	audit *auditor     // nil: no audit trail
	outer http.Handler // the whole chain
}

var _ http.Handler = (*httpHandler)(nil)

// ServeHTTP serves one request.
func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.outer.ServeHTTP(w, r) }

// newHTTPHandler builds the handler HTTPHandler describes.
func newHTTPHandler(scope *callerScope, expo *exposure, views *viewTable, start *startup, log *slog.Logger, o HTTPOptions) *httpHandler {
	hh := &httpHandler{scope: scope, expo: expo, views: views, start: start, log: log}
	fromContext := func(r *http.Request) *mcp.Server {
		if v, ok := r.Context().Value(viewKey{}).(*view); ok {
			return v.mcp
		}
		if hh.scope.callers != nil {
			return hh.expo.callerView(hh.scope.requestCaller(r)).mcp
		}
		return hh.views.main().mcp
	}
	// Neither handler sets JSONResponse: every answer is an SSE event of
	// its own, which relay.SpliceHTTP can splice (a batch answered as one JSON
	// array would carry its placeholders unspliced).
	sessions := hh.sessions(mcp.NewStreamableHTTPHandler(fromContext,
		&mcp.StreamableHTTPOptions{SessionTimeout: o.SessionIdle, Logger: sdkLogger(hh.log)}), o.MaxSessions)
	// A stateless request ends when its HTTP request does: a client that
	// goes away cancels the call (the transport spec's cancellation).
	stateless := hh.stateless(mcp.NewStreamableHTTPHandler(fromContext,
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: sdkLogger(hh.log), PropagateRequestCancellation: true}))
	// Large relayed results are written into each response as the
	// upstream's bytes (relay.SpliceHTTP).
	h := relay.SpliceHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p *peeked
		if r.Method == http.MethodPost && r.Header.Get(protocolHeader) == "" && r.Header.Get("Mcp-Session-Id") == "" {
			// An initialize, or a request of the stateless protocol
			// without its version header: the body tells.
			var ok bool
			if p, ok = peekBody(w, r); !ok {
				return
			}
			// Without a session, only an initialize starts one; the
			// go-sdk answered anything else 200 with error code 0.
			if !statelessRequest(r.Header, p) && p.method != "" && p.method != "initialize" && len(p.id) > 0 {
				writeInvalidRequest(w, fmt.Sprintf("%s without a session: send initialize first and then the Mcp-Session-Id it answers, or use protocol %s with its Mcp-Protocol-Version header", p.method, StatelessProtocol))
				return
			}
		}
		if statelessRequest(r.Header, p) {
			stateless(w, r, p)
			return
		}
		sessions.ServeHTTP(w, r)
	}), hh.log)
	// The body's limit (the go-sdk's, which peekBody and both handlers
	// apply again) is first applied here, on the connection's own
	// writer: net/http closes the connection after a request too large
	// only when told through that writer, which the splice writer hides.
	outer := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hh.scope.refuseUnauthenticated(w, r) {
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes)
		}
		if r.Method == http.MethodPost && r.Body != nil && (refuseBatch(w, r) || refuseDuplicateHeaders(w, r) || refuseID(w, r) || hh.refuseReadOnlyRun(w, r)) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	if hh.scope.callers != nil {
		// Every request names its caller (401 otherwise), whose view
		// answers it.
		outer = hh.scope.callers.Require(outer, hh.log)
	}
	hh.outer = outer
	return hh
}

// refuseBatch answers a POST whose body is a JSON array (a JSON-RPC
// batch, which neither protocol generation served here accepts) with 400
// and an invalid-request error, from its first bytes: the go-sdk decoded
// a whole batch before refusing it (a 1.5 MB batch cost 1.46 CPU-s and
// 161 MB), and without a version header answered 200 with error code 0.
// Any other body is left as it was. It reports whether it answered.
func refuseBatch(w http.ResponseWriter, r *http.Request) bool {
	br := bufio.NewReaderSize(r.Body, 512)
	r.Body = readCloser{br, r.Body}
	for {
		b, err := br.Peek(1)
		if err != nil || len(b) == 0 {
			return false // empty or unreadable: the handlers say so
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			br.ReadByte()
			continue
		case '[':
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Connection", "close") // the rest of the batch is not read
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batches are not supported: send one JSON-RPC message per request"}}`+"\n")
			return true
		}
		return false
	}
}

// onceHeaders are the headers a proxy may route (or authenticate) a
// request by: each may be given once. Authorization is read by
// forward_authorization too, with or without callers.
var onceHeaders = []string{protocolHeader, "Mcp-Method", "Mcp-Name", "Mcp-Session-Id", "Authorization"}

// refuseDuplicateHeaders answers a request that gives a header of
// onceHeaders more than once with 400: the go-sdk read the first copy
// while a proxy in front may route on (or check) the last. It reports
// whether it answered.
func refuseDuplicateHeaders(w http.ResponseWriter, r *http.Request) bool {
	for _, name := range onceHeaders {
		if n := len(r.Header.Values(name)); n > 1 {
			writeInvalidRequest(w, fmt.Sprintf("header %s is given %d times: give it once", name, n))
			return true
		}
	}
	return false
}

// refuseID answers a request whose JSON-RPC id is a number that is not
// an integer within 64 bits (1.5, 1e3, a 30-digit number) with 400: MCP
// ids are strings or integers, and the go-sdk answered such an id as
// another number (1.5 as 1, 10^30 as -2^63), which the client cannot
// match to its request. Stdio echoes ids as sent. The body is read
// (within the limit already set) and put back, and the same reading
// serves refuseVersionMismatch. It reports whether it answered.
func refuseID(w http.ResponseWriter, r *http.Request) bool {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return true
		}
		return false // the handlers say what is wrong
	}
	i := rawjson.SkipSpace(body, 0)
	if i >= len(body) || body[i] != '{' || !json.Valid(body) {
		return false
	}
	var id []byte
	rawjson.EachMember(body[i:], func(name string, _, value []byte) bool {
		if name == "id" {
			id = value
			return false
		}
		return true
	})
	if len(id) > 0 && (id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
		if _, err := strconv.ParseInt(string(id), 10, 64); err != nil {
			writeInvalidRequest(w, fmt.Sprintf("id %s: a JSON-RPC id must be a string or an integer from -2^63 to 2^63-1", id[:min(len(id), 40)]))
			return true
		}
	}
	return refuseVersionMismatch(w, r, body[i:], id)
}

// refuseVersionMismatch answers 400 HeaderMismatch (-32020) for a request
// whose body's _meta names a protocol version that its
// Mcp-Protocol-Version header does not (or that has no such header but a
// session id): a request inside a 2025-06-18 session whose _meta says
// 2026-07-28. The transport spec asks a server to reject a header that
// disagrees with the body, so that a proxy routing on the header and the
// server reading the body cannot be told different things; the go-sdk's
// session handler answered that the session's own version was not
// supported. A request whose header says StatelessProtocol or later is
// the stateless handler's to check, and one with neither header nor
// session is told apart by its body (statelessRequest). msg is the
// request's JSON object, id its raw id.
func refuseVersionMismatch(w http.ResponseWriter, r *http.Request, msg, id []byte) bool {
	header := r.Header.Get(protocolHeader)
	if header >= StatelessProtocol || header == "" && r.Header.Get("Mcp-Session-Id") == "" {
		return false
	}
	if !bytes.Contains(msg, []byte(mcp.MetaKeyProtocolVersion)) {
		return false
	}
	var m struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return false
	}
	v, _ := m.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
	if v == "" || v == header {
		return false
	}
	var text string
	if header == "" {
		text = fmt.Sprintf("Header mismatch: no %s header, but _meta %s says %q: a request of protocol %s sends %s: %s and needs no session", protocolHeader, mcp.MetaKeyProtocolVersion, v, v, protocolHeader, v)
	} else {
		text = fmt.Sprintf("Header mismatch: %s header value %q does not match _meta %s value %q: a request of protocol %s sends %s: %s and needs no session; in a session of %s, send no protocol version in _meta", protocolHeader, header, mcp.MetaKeyProtocolVersion, v, v, protocolHeader, v, header)
	}
	if len(id) == 0 {
		id = []byte("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id),
		"error": map[string]any{"code": -32020, "message": text}})
	return true
}

// writeInvalidRequest answers 400 with an invalid-request JSON-RPC error
// (id null: the request's own could not be used).
func writeInvalidRequest(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32600, "message": msg}})
}

// readCloser reads through a buffer and closes what it buffers.
type readCloser struct {
	io.Reader
	io.Closer
}

// statelessRequest reports whether an HTTP request is of the stateless
// protocol: its version header says StatelessProtocol or later, or it
// has none and its body's _meta names a protocol version (the go-sdk
// then answers that the header is missing, as the transport spec asks).
func statelessRequest(h http.Header, p *peeked) bool {
	if v := h.Get(protocolHeader); v != "" {
		return v >= StatelessProtocol
	}
	return p != nil && p.meta[mcp.MetaKeyProtocolVersion] != nil
}

// statelessCall reports whether a tool call or list request came over the
// stateless protocol on HTTP (the only way the go-sdk hands a handler the
// request's HTTP headers without a session).
func statelessCall(extra *mcp.RequestExtra) bool {
	return extra != nil && extra.Header != nil && statelessRequest(extra.Header, nil)
}

// sessions serves the requests of 2025-11-25 and older clients: it
// makes the view of a request that may open a session (in dynamic mode)
// and refuses a session over max.
func (hh *httpHandler) sessions(h http.Handler, max int) http.Handler {
	views := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			h.ServeHTTP(w, r)
			return
		}
		v := hh.expo.newSessionView(hh.scope.requestCaller(r))
		if v == nil {
			h.ServeHTTP(w, r)
			return
		}
		defer hh.views.adopt(v)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), viewKey{}, v)))
	})
	if max <= 0 {
		return views
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && hh.views.sessionCount() >= max {
			w.Header().Set("Retry-After", "30")
			http.Error(w, fmt.Sprintf("Service Unavailable: %d sessions are open, the most this server takes (--max-sessions); close one or retry later", max), http.StatusServiceUnavailable)
			return
		}
		views.ServeHTTP(w, r)
	})
}

// stateless serves the requests of the stateless protocol. In
// dynamic mode, a request whose _meta carries a toolset gets a view with
// the toolset's domains enabled.
func (hh *httpHandler) stateless(h http.Handler) func(http.ResponseWriter, *http.Request, *peeked) {
	return func(w http.ResponseWriter, r *http.Request, p *peeked) {
		if r.Method != http.MethodPost || !hh.expo.dynamic() {
			h.ServeHTTP(w, r)
			return
		}
		if p == nil {
			var ok bool
			if p, ok = peekBody(w, r); !ok {
				return
			}
		}
		raw, ok := p.meta[ToolsetMetaKey]
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		var handle string
		if err := json.Unmarshal(raw, &handle); err != nil {
			writeRPCError(w, p.id, fmt.Sprintf("_meta %q must be a string, the toolset that enable_domain answered", ToolsetMetaKey))
			return
		}
		keys, err := decodeToolset(handle)
		if err != nil {
			writeRPCError(w, p.id, fmt.Sprintf("_meta %q: %v", ToolsetMetaKey, toolsetError(handle, err)))
			return
		}
		hh.start.waitReady(r.Context()) // its domains may be upstreams still connecting
		who := hh.scope.requestCaller(r)
		keys, dropped := knownKeys(hh.scope.catalogFor(who), hh.scope.unavailableFor(who), keys)
		if len(dropped) > 0 {
			hh.log.Warn("a request's toolset names domains or groups this server does not have; they are left out", "left_out", dropped)
		}
		if len(keys) == 0 {
			h.ServeHTTP(w, r)
			return
		}
		v := hh.expo.toolsetView(encodeToolset(keys), keys, who)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), viewKey{}, v)))
	}
}

// peeked is what HTTPHandler reads of a request body before the go-sdk
// does: the JSON-RPC id and the params' _meta.
type peeked struct {
	id     json.RawMessage
	method string
	meta   map[string]json.RawMessage
}

// peekBody reads r's body (within the go-sdk's size limit), puts it back
// for the go-sdk, and returns its id and _meta; a body that is not one
// JSON-RPC message yields none (the go-sdk answers it). When the body
// cannot be read it answers the request itself and returns false.
func peekBody(w http.ResponseWriter, r *http.Request) (*peeked, bool) {
	body, ok := bufferBody(w, r)
	if !ok {
		return nil, false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return &peeked{}, true
	}
	return &peeked{id: msg.ID, method: msg.Method, meta: msg.Params.Meta}, true
}

// bufferBody reads r's body (within the go-sdk's size limit) and puts
// it back for the go-sdk. When the body cannot be read it answers the
// request itself and returns false.
func bufferBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes))
	r.Body.Close()
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, fmt.Sprintf("Bad Request: reading the body: %v", err), http.StatusBadRequest)
		}
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// writeRPCError answers a request of the stateless protocol with an
// invalid-params JSON-RPC error and 400, as the transport spec asks.
func writeRPCError(w http.ResponseWriter, id json.RawMessage, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32602, "message": msg}})
}

// viewKey is the request context key of the view made for a request that
// may open a session, or for a stateless request's toolset.
type viewKey struct{}

// SessionCount returns the number of open client sessions of the
// 2025-11-25 and older protocols over HTTP (the go-sdk's short-lived
// sessions of stateless requests have no id and are not counted).
func (s *Server) SessionCount() int { return s.views.sessionCount() }

// ViewCount returns the number of server views: the primary one, one per
// session in dynamic mode over HTTP, and those kept for the toolsets of
// stateless requests (at most maxToolsetViews).
func (s *Server) ViewCount() int { return s.views.count() }
