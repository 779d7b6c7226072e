// Package progress tells an MCP client that toolscout is waiting on its
// behalf: progress notifications to a request that carries a progress
// token, log lines otherwise.
//
// Its place: below package server and server/gateway, which both make a
// client request wait (for the index to load, for an upstream server to
// start) and tell it the same way, one rising series of notifications
// per request however many waits it goes through. It knows nothing of
// tools, the index or upstream servers: what is awaited is a channel and
// a sentence.
//
//	ctx = progress.WithCall(ctx, req) // once, where the request comes in
//	if !progress.Wait(ctx, log, nil, loaded, "tools/list waits", func() string { return "the index to load" }) {
//		return ctx.Err()
//	}
package progress
