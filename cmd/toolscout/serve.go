package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server"
)

const version = "0.1.0"

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("serve", "serve [flags]\n\nServes discover_tools, get_tool_schema and execute_tool over MCP: stdio by\ndefault (logs go to stderr), Streamable HTTP with --http.", stderr)
	g.register(fs)
	httpAddr := fs.String("http", "", "serve Streamable HTTP on `ADDR` (e.g. 127.0.0.1:8080) instead of stdio")
	expose := fs.String("expose", "meta", "what tools/list shows: meta (the three meta-tools)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("serve takes no arguments, got %q", pos)
	}
	if *expose != "meta" {
		return usagef("--expose %q: only meta is available without upstream servers", *expose)
	}
	log, err := g.logger(stderr)
	if err != nil {
		return err
	}
	eng, store, _, err := g.openEngine(ctx, stderr, log)
	if err != nil {
		return err
	}
	defer store.Close()
	srv := server.New(server.Options{Engine: eng, Version: version, Logger: log})
	cat := eng.Catalog()
	if *httpAddr == "" {
		log.Info("serving over stdio", "tools", cat.Len(), "domains", len(cat.Domains()), "embedder", eng.EmbedderName())
		err := srv.MCP().Run(ctx, &mcp.StdioTransport{})
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	return serveHTTP(ctx, *httpAddr, srv.MCP(), stderr, fmt.Sprintf("%d tools in %d domains, embedder %s", cat.Len(), len(cat.Domains()), eng.EmbedderName()))
}

// serveHTTP serves the MCP server over Streamable HTTP at /mcp until ctx is
// done.
func serveHTTP(ctx context.Context, addr string, srv *mcp.Server, stderr io.Writer, what string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "toolscout speaks MCP (Streamable HTTP) at /mcp", http.StatusNotFound)
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/mcp"
	fmt.Fprintf(stderr, "toolscout serving %s over Streamable HTTP at %s\n", what, url)
	fmt.Fprintf(stderr, "connect a client, e.g.: claude mcp add --transport http toolscout %s\n", url)
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(stderr, "warning: %s is reachable from other machines; toolscout has no authentication\n", ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := hs.Shutdown(sctx)
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}
