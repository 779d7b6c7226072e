// Package server exposes toolscout's search engine to LLM clients as an MCP
// server with three meta-tools: discover_tools, get_tool_schema and
// execute_tool.
//
//	srv := server.New(server.Options{Engine: eng})
//	err := srv.MCP().Run(ctx, &mcp.StdioTransport{})
//
// Tools run through an [Executor] (the gateway's upstream sessions); tools
// that come from catalog files only are listed, described, and refused with
// an actionable error when executed.
package server
