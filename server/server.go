package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
)

// Meta-tool names.
const (
	DiscoverTools = "discover_tools"
	GetToolSchema = "get_tool_schema"
	ExecuteTool   = "execute_tool"
)

// Executor runs a tool on its upstream server.
type Executor interface {
	// Execute calls the tool with already validated arguments and returns
	// the upstream result untouched. A tool it cannot run is reported with
	// an error wrapping ErrNotExecutable.
	Execute(ctx context.Context, req *mcp.CallToolRequest, t *index.Tool, args map[string]any) (*mcp.CallToolResult, error)
}

// ErrNotExecutable is wrapped by Executor errors for tools that have no
// upstream server (tools listed from a catalog file).
var ErrNotExecutable = errors.New("tool has no upstream server")

// Options configures a Server.
type Options struct {
	Engine *search.Engine
	// Executor runs tools; nil means every tool is catalog-only.
	Executor Executor
	// Name and Version identify the server to clients.
	Name, Version string
	Logger        *slog.Logger
}

// Server is toolscout's MCP server.
type Server struct {
	mcp  *mcp.Server
	eng  *search.Engine
	exec Executor
	log  *slog.Logger
}

// New builds the MCP server with its meta-tools and instructions generated
// from the engine's catalog.
func New(opts Options) *Server {
	name, version := opts.Name, opts.Version
	if name == "" {
		name = "toolscout"
	}
	if version == "" {
		version = "dev"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{eng: opts.Engine, exec: opts.Executor, log: log}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: name, Title: "toolscout", Version: version}, &mcp.ServerOptions{
		Instructions: Instructions(opts.Engine.Catalog()),
		Logger:       log,
	})
	s.addMetaTools()
	return s
}

// MCP returns the underlying go-sdk server, to run on a transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Instructions tells the client how to use the meta-tools and which domains
// exist, in about 150 tokens or less.
func Instructions(cat *index.Catalog) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This server finds and runs tools from a catalog of %d tools in %d domains. ", cat.Len(), len(cat.Domains()))
	b.WriteString("Workflow: 1) discover_tools with a query describing the task (or a domain to browse); ")
	b.WriteString("2) get_tool_schema for the tool you pick; 3) execute_tool with its arguments. ")
	b.WriteString("Skip discovery for tools you have already seen. Domains: ")
	const maxListed = 40
	for i, d := range cat.Domains() {
		if i == maxListed {
			fmt.Fprintf(&b, " and %d more", len(cat.Domains())-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.Name)
	}
	b.WriteString(".")
	return b.String()
}

func boolPtr(b bool) *bool { return &b }

// errorResult is a tool failure the model can act on.
func errorResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}
