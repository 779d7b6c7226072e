package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server"
)

const version = "0.1.0"

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("serve", "serve [flags]\n\nServes discover_tools, get_tool_schema and execute_tool over MCP: stdio by\ndefault (logs go to stderr), Streamable HTTP with --http. With --config it\nconnects to the upstream servers in the background and indexes their tools\nas they come.", stderr)
	g.register(fs)
	httpAddr := fs.String("http", "", "serve Streamable HTTP on `ADDR` (e.g. 127.0.0.1:8080) instead of stdio")
	expose := fs.String("expose", "", "what tools/list shows: "+strings.Join(server.ExposeModes, ", ")+" (default meta, or the config's toolscout.expose)")
	var pins stringList
	fs.Var(&pins, "pin", "with --expose core: a qualified tool name or `GLOB` to list directly (repeatable)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs("serve", pos); err != nil {
		return err
	}
	if *expose != "" && !validExpose(*expose) {
		return usagef("--expose %q: use %s", *expose, strings.Join(server.ExposeModes, ", "))
	}
	a, log, err := g.openApp(ctx, stderr, false)
	if err != nil {
		return err
	}
	defer a.Close()
	exp := server.Exposure{Mode: *expose, Pinned: pins}
	if a.gc != nil {
		if exp.Mode == "" {
			exp.Mode = a.gc.Expose
		}
		exp.Pinned = append(exp.Pinned, a.gc.Pinned...)
	}
	if exp.Mode == "" {
		exp.Mode = server.ExposeMeta
	}
	if exp.Mode == server.ExposeCore && len(exp.Pinned) == 0 {
		return usagef("--expose core needs tools to pin: --pin NAME_OR_GLOB or toolscout.pinned in the config")
	}
	opts := server.Options{Engine: a.eng, Store: a.store, Expose: exp, Version: version, Logger: log}
	if a.gw != nil {
		opts.Executor = a.gw
		opts.Domains = a.domain
	}
	srv := server.New(opts)
	if a.gw != nil {
		a.gw.Start(ctx)
	}
	cat := a.eng.Catalog()
	what := fmt.Sprintf("%d tools in %d domains, embedder %s, expose %s", cat.Len(), len(cat.Domains()), a.eng.EmbedderName(), exp.Mode)
	if a.gw != nil {
		what += fmt.Sprintf(", %d upstream servers connecting", len(a.gc.Upstreams))
	}
	if *httpAddr == "" {
		log.Info("serving over stdio: " + what)
		err := srv.MCP().Run(ctx, &mcp.StdioTransport{})
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	return serveHTTP(ctx, *httpAddr, srv.HTTPHandler(), stderr, what)
}

// serveHTTP serves the MCP server over Streamable HTTP at /mcp until ctx is
// done.
func serveHTTP(ctx context.Context, addr string, handler http.Handler, stderr io.Writer, what string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
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
