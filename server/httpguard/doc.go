// Package httpguard decides who may reach toolscout's HTTP endpoints
// that reveal data (/mcp, /metrics): the Host and Origin checks the MCP
// transport specification asks of servers (against DNS rebinding and
// cross-site requests) and an optional bearer token. The probes
// (/healthz, /readyz) are left unguarded on purpose: they name nothing.
//
// Its place: in front of the handlers package server makes (HTTPHandler,
// the metrics handler); cmd wraps them with [Wrap] and uses
// [IsLoopbackHost] to refuse a non-loopback address without a token. It
// knows nothing of MCP.
//
//	h := httpguard.Wrap(srv.HTTPHandler(server.HTTPOptions{}), httpguard.Options{Token: token})
package httpguard
