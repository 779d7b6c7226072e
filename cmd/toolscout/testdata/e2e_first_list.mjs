// A client that acts like Claude Desktop, through the official TypeScript
// SDK: it lists the tools right after initialize (with a progress
// token) and again after every notifications/tools/list_changed, then
// watches for SETTLE_MS more. With QUERY set it also asks discover_tools
// at once; with CALL (a tool name) and CALL_ARGS (JSON) it calls a tool
// at once. Prints one JSON object for the Go test: the size of every
// list in order, the notifications, the progress messages and what the
// calls answered, with the milliseconds from the start of the server to
// each answer.
//
// With HTTP_URL set it connects to that Streamable HTTP endpoint (a
// server started by the test) instead of starting BINARY over stdio;
// with both BINARY and HTTP_URL, it runs the two sessions at once (one
// node start and SDK load for both) and prints the stdio session's line,
// then the HTTP session's.
//
//   SETTLE_MS=1500 node e2e_first_list.mjs BINARY ARG...
//   HTTP_URL=http://127.0.0.1:PORT/mcp node e2e_first_list.mjs
//   HTTP_URL=http://127.0.0.1:PORT/mcp node e2e_first_list.mjs BINARY ARG...
//
// With SESSIONS set (a JSON array of {"env": {...}, "args": [...]}) it
// runs one stdio session of BINARY after the other instead, each with
// its variables added to the environment (QUERY, CALL and CALL_ARGS
// among them) and its args, a line each: one node start for a test's
// several starts of the server.
//
//   SESSIONS='[{"env": {"QUERY": "..."}, "args": [...]}, ...]' node e2e_first_list.mjs BINARY
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { bothSessions } from "./both_sessions.mjs";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [bin, ...args] = process.argv.slice(2);
const settle = Number(process.env.SETTLE_MS ?? 1500);

async function session(transport, env = process.env) {
  const start = Date.now();
  const out = { lists: [], names: [], notices: 0, progress: [] };
  const client = new Client({ name: "claude-desktop-like", version: "1.0.0" });
  let relisting = Promise.resolve();
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    out.notices++;
    relisting = relisting.then(async () => {
      out.lists.push((await client.listTools()).tools.length);
    });
  });
  await client.connect(transport());
  const pending = [];
  if (env.QUERY) {
    pending.push(client.callTool({ name: "discover_tools", arguments: { query: env.QUERY, limit: 5 } }).then((r) => {
      out.discover = { ms: Date.now() - start, result: r.structuredContent ?? r.content };
    }));
    pending.push(client.callTool({ name: "discover_tools", arguments: {} }).then((r) => {
      out.contents = r.structuredContent ?? r.content;
    }));
  }
  if (env.CALL) {
    pending.push(client.callTool({ name: env.CALL, arguments: JSON.parse(env.CALL_ARGS ?? "{}") }).then(
      (r) => { out.call = { ms: Date.now() - start, result: r }; },
      (e) => { out.call = { ms: Date.now() - start, error: String(e) }; }));
  }
  const first = await client.listTools(undefined, { timeout: 120000, onprogress: (p) => out.progress.push(p.message ?? "") });
  out.first = first.tools.length;
  out.firstMs = Date.now() - start;
  out.names = first.tools.map((t) => t.name);
  out.lists.unshift(first.tools.length);
  await Promise.all(pending);
  await new Promise((r) => setTimeout(r, settle));
  await relisting;
  await client.close();
  return out;
}

if (process.env.SESSIONS) {
  for (const run of JSON.parse(process.env.SESSIONS)) {
    const env = { ...process.env, ...run.env };
    delete env.SESSIONS;
    console.log(JSON.stringify(await session(() => new StdioClientTransport({ command: bin, args: run.args, env, stderr: "inherit" }), env)));
  }
} else {
  await bothSessions(session, bin, args);
}
