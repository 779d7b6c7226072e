package server

import (
	"context"
	"io"
	"log/slog"

	"github.com/toolscout/toolscout/server/relay"
	"github.com/toolscout/toolscout/server/stdio"
)

// ServeStdio serves one MCP session over newline-delimited JSON-RPC on in
// and out, through the transport stdio.NewTransport returns, until in ends
// or ctx is cancelled. Unlike s.MCP().Run with that transport and no
// splicer, it writes a large relayed tool result as the upstream's bytes,
// without the SDK encoding it (server/relay): the answer is the same, byte for byte; a 60
// MiB one peaks at 2× its size in memory instead of 3× (BENCHMARKS.md).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, log *slog.Logger) error {
	return s.serveStdio(ctx, in, out, log, relay.NewSplicer())
}

func (s *Server) serveStdio(ctx context.Context, in io.Reader, out io.Writer, log *slog.Logger, sp *relay.Splicer) error {
	defer sp.Close()
	return s.MCP().Run(relay.WithSplicer(ctx, sp), stdio.NewTransport(in, out, log, sp))
}
