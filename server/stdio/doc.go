// Package stdio is toolscout's own MCP stdio transport: newline-delimited
// JSON-RPC on stdin and stdout that no input line can end.
//
// Its place: between the client's process and the go-sdk's session, under
// package server, which runs its Server over it (server.ServeStdio). The
// go-sdk's stdio transport ends the session on the first line it cannot
// decode and echoes ids it cannot keep with other bytes; here a guard
// reads each line first (guard.go: bad requests are answered as JSON-RPC
// 2.0 says, bad responses dropped), a call table puts every id back as
// the client sent it and gives lifecycle errors a real code (ids.go), and
// the writer splices a large relayed result in place of its placeholder
// (server/relay's Splicer). It knows nothing of tools, catalogs or
// upstream servers; the upstream side of stdio (the child processes the
// gateway runs) is server/gateway's.
//
//	sp := relay.NewSplicer()
//	defer sp.Close()
//	err := srv.Run(relay.WithSplicer(ctx, sp), stdio.NewTransport(os.Stdin, os.Stdout, log, sp))
package stdio
