// Package server exposes toolscout's search engine to LLM clients as an MCP
// server with three meta-tools: discover_tools, get_tool_schema and
// execute_tool.
//
//	srv := server.New(server.Options{Live: live})
//	err := srv.ServeStdio(ctx, os.Stdin, os.Stdout, log)
//
// Over HTTP, one handler serves both protocol generations: requests of
// [StatelessProtocol] (2026-07-28) each on their own, so that any replica
// answers any of them, and older clients with sessions:
//
//	http.Handle("/mcp", srv.HTTPHandler(server.HTTPOptions{SessionIdle: 30 * time.Minute}))
//
// Place in the flow: the top library layer. The [Gateway] keeps sessions
// to upstream servers and is a plain source of domain specs (Specs,
// Changed) that cmd hands to search.Live; the [Server] searches through
// the live engine, subscribes to it to update tools/list, and runs tools
// through its [Executor] (the gateway). The gateway can start with the
// tools each server listed on its last run ([GatewayOptions].Known), and
// the server holds a first tools/list and the first calls until the start
// settles (startup.go), telling the client with progress notifications.
//
// What tools/list shows besides the meta-tools is the [Exposure]: nothing
// more (meta), every tool (eager; compact, with stripped schemas), pinned
// ones (core), domains the model enables (dynamic), or every tool while
// they cost less than a token budget (auto). Disabled tools are never
// listed, found unless asked for, or run.
//
// Tools run through an [Executor] (the gateway's upstream sessions); tools
// that come from catalog files only are listed, described, and refused with
// an actionable error when executed.
package server
