// Package gateway keeps toolscout's sessions to upstream MCP servers: it
// starts or dials each configured server, lists its tools, follows its
// list_changed notifications, restarts it with a backoff when it stops,
// and runs tools on it.
//
// Its place: beside package server, never under it. cmd builds a
// [Gateway] from the mcpServers config ([UpstreamConfig]) and hands it to
// search.Live as a plain source of domain specs (Specs, Changed,
// WaitKnown) and to the server as the Executor of execute_tool
// (Execute), whose parts also report which domains are down
// ([Directory].Unavailable, [Upstreams].Status and Connecting). The
// server knows it only through those small interfaces; the gateway knows
// nothing of the meta-tools, exposure modes or clients, nor of ranking
// (no package it imports is search: the word frequencies it describes a
// server with come in [Options].WordFrequency), and imports no
// server package but the two it shares with the server: server/relay (a
// large tool result is kept as the upstream's bytes, lineconn.go) and
// server/progress (a call that waits for a server to start tells its
// client so).
//
// Inside, an upstream (life.go) is one server's life: its session and
// its restarts, its tools as its pins let them be served (pins.go), its
// prompts and resources (surface.go), and the calls made on it (Execute
// and the prompt and resource calls share its one prologue: wait for a
// server still starting, say why it is unavailable, bound the call by
// the server's timeout and the gateway's closing, word the failure).
// The Gateway starts, closes and routes between upstreams; what is
// asked across them is answered by small types that callers reach
// through its accessors, not by methods of its own:
// [Gateway.Upstreams] (fleet.go: the upstreams' state by domain, and the
// waits), [Gateway.Directory] (directory.go: what they serve and say of
// themselves, their catalog, and Keep) and [Gateway.Surfaces]
// (surface.go). The calls of clients
// in flight are one table per gateway (calls.go's routes, bridge.go).
//
// Besides tools it lists each server's prompts, resources and resource
// templates, follows their list_changed, gets, reads and subscribes on
// the server ([Surfaces]: List, WatchSurface, GetPrompt, ReadResource,
// SubscribeResource); server/surface passes them through.
// A server that floods is bounded (MaxSurfaceItems, MaxSurfaceBytes,
// MaxSurfacePages per list).
//
// The gateway can start with the tools each server listed on its last
// run ([Options].Known), so that a start does not wait for slow servers;
// what a stdio server prints that is not JSON-RPC is skipped and logged
// (noise.go), a message over the size limit answered with an error
// (frameGuard), and its environment is an allow-list (environ.go).
//
// With [Options].Pins (pins.go), every listing goes through a [Pinner]
// (index/pin's Guard over the data dir's pins) before it is served: a
// tool whose definition changed since it was approved is served as
// approved and Execute refuses it ([ErrHeld]), the change logged once
// with its diff, until an approval (toolscout approve, from another
// process) is seen by the poll of the pins' stamp. After the pins were
// found damaged, a tool they do not know is held the same way, served as
// listed (nothing else was approved).
//
// A remote server's credentials are the config's Headers; a tool call of
// a caller the config maps (UpstreamConfig.CallerHeaders) carries that
// caller's headers alone instead, and one whose own Authorization it
// forwards carries that in place of Headers' one, on that call's HTTP
// request, read by the header transport from the call's context
// (callerheaders.go). A 401 or 403 is worded with the server's name and
// matches [ErrUnauthorized], at connect and at a call. A server behind
// OAuth (UpstreamConfig.Auth, a [TokenSource]: server/upauth) gets its
// bearer token instead of Headers' Authorization; a 401 makes the
// source refresh it (one refresh at a time) and the request is sent
// once more; a token that cannot be had or refreshed matches
// [ErrSignIn] and says to run toolscout auth login SERVER. A server
// whose UpstreamConfig.CallerIdentity is set runs each caller's tool
// calls on a session of that caller's own (percaller.go): with
// [IdentityForward] its bearer token goes as it came, with
// [IdentityExchange] it is exchanged first at the server's
// authorization server (RFC 8693, UpstreamConfig.Exchange: exchange.go);
// an exchange refused matches [ErrExchange] and [ErrUnauthorized].
//
// What a server asks of its client in the middle of a call (sampling,
// elicitation, roots) and what it tells it (progress, log messages) goes
// to the client of that call (calls.go): each call with a client session
// is a route while it runs, found over Streamable HTTP by the stream the
// message came on (tagger.go marks it), over stdio while one client's
// calls run on the server. A 2026-07-28 server's input-required result
// goes back to the client untouched (the go-sdk client's own fulfilment
// is off), with the client's capabilities sent per request.
//
//	gw := gateway.New(gateway.Options{Upstreams: ups, Logger: log})
//	gw.Start(ctx)
//	defer gw.Close()
//	srv := server.New(server.Options{Live: live, Executor: gw})
package gateway
