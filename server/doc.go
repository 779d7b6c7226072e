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
// Place in the flow: the top library layer. The server searches through
// the live engine (search.Live), subscribes to it to update tools/list,
// and runs tools through its [Executor]: server/gateway's Gateway, which
// keeps the sessions to upstream servers and is, for search.Live, a
// plain source of domain specs that cmd hands it. The gateway can start
// with the tools each server listed on its last run, and the server holds
// a first tools/list and the first calls until the start settles
// (startup.go), telling the client with progress notifications
// (server/progress).
//
// What is not the meta-tools' own lives in packages under this one, each
// knowing nothing of the others' insides:
//
//   - server/gateway: upstream MCP sessions (stdio children, Streamable
//     HTTP, SSE), restarts, list_changed, execute_tool's calls.
//   - server/stdio: toolscout's own stdio transport to its client.
//   - server/relay: a large tool result passed from the gateway to the
//     client's transport as the upstream's bytes.
//   - server/progress: waits told to the client.
//   - server/arguments: a tool's arguments: validation in plain words,
//     examples, compact schemas.
//   - server/condense: the short summaries of compact and condensed
//     listings.
//   - server/lint: the per-tool token cost and problems of a catalog.
//   - server/httpguard: the Origin and bearer-token checks over HTTP.
//   - server/callers: who sends a request (bearer tokens, JWTs) and what
//     that caller may see (Caller.Visible).
//   - server/surface: the upstreams' prompts, resources and templates,
//     passed through under domain__name and toolscout://DOMAIN/<URI>
//     (passthrough.go wires it into every view).
//   - server/codemode/tsdecl: TypeScript declarations of tools from
//     their schemas, for code mode (declarations.go answers with them).
//
// The server imports gateway (the interfaces the gateway meets are
// checked where they are declared), stdio, relay, progress, arguments,
// condense, surface and tsdecl; none of them imports the server.
//
// Inside this package, Server only wires and serves (at most 20 methods,
// TestServerHasFewMethods); each job is a type of its own, holding what
// it needs:
//
//   - callerScope (visibility.go): what a caller sees, its subset of the
//     catalog and the servers without tools it may see.
//   - startup (startup.go): the waits of the first seconds.
//   - the exposure modes (mode.go, mode_*.go, auto.go, compact.go,
//     runcode.go): each mode's policy, a pure function from the caller's
//     catalog, the caller and its enabled domains to the tools listed
//     directly, registered in modePolicies.
//   - exposure (expose.go): the mechanism that lists in each view what
//     the mode's policy gives; its mu guards the mode, auto mode's
//     decisions (autoMode) and the views' direct and enabled sets. Each
//     view's listSync (listsync.go) makes a change of its list whole to
//     clients.
//   - viewTable (views.go): the views and their sessions, under a lock
//     of their own; viewBuilder (viewbuilder.go) makes a view.
//   - metaTools (metatools.go, discover.go, schema.go, declarations.go,
//     execute.go, unlisted.go): the handlers of toolscout's own tools; no state but
//     the disabled tools of the catalog and the search failures in a row.
//   - greeting (instructions.go, purpose.go): the instructions, with
//     what each domain is for; the first initialize waits for the
//     upstream servers' tools within Options.InitializeWait (startup.go).
//   - httpHandler (http.go): Streamable HTTP for both protocol
//     generations, routing each request to its view.
//
// What tools/list shows besides the meta-tools is the [Exposure]: nothing
// more (meta), every tool (eager; compact, with condensed descriptions
// and their required arguments only), pinned ones (core), domains the
// model enables (dynamic), or every tool while they cost less than a token budget
// (auto); with Condense, the tools listed directly have condensed
// descriptions. Disabled tools are never listed, found unless asked for,
// or run.
//
// discover_tools and get_tool_schema answer with structuredContent and,
// for clients not known to read it, the same JSON as text; a client
// known to read it (by name, [DefaultStructuredClients], or by
// declaring [StructuredCapability]) gets a line of text instead
// (structured.go). One tool's schema answer is kept within
// [SchemaBudget] tokens (schemashown.go).
//
// Tools run through an [Executor] (the gateway's upstream sessions); tools
// that come from catalog files only are listed, described, and refused with
// an actionable error when executed. With [Options].Audit, each call that
// runs a tool (execute_tool, or a tool listed directly) leaves one JSON
// line, an [AuditRecord], on the writer cmd opened (audit.go); the caller
// it names is the one identity feedback.go remembers searches by
// (callerOf), so that per-caller identities arrive in one place (the
// feedback channel counts only the authenticated ones apart:
// feedbackCaller).
//
// With [Options].Callers, every view belongs to one caller (visibility.go):
// HTTPHandler requires a caller's credential and answers each request with
// its caller's view (chosen per request, never per session, so replicas
// agree; a dynamic-mode session's or a toolset's view is its caller's
// too), and stdio serves [Options].Caller. Each answer is made from the
// caller's subset of the catalog (index.Catalog.Subset, cached per
// catalog), so that resolving, suggesting, browsing and scope errors treat
// a hidden tool exactly as a missing one; searches rank the whole index
// with the hidden tools excluded before the top k is cut; servers without
// tools are shown by the caller's domain rules; MetricsHandler filters
// /metrics by caller. What else is relayed per domain (prompts,
// resources) asks the same [Visibility] question of the view's caller.
package server
