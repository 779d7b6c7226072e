// End-to-end MCP client built on the official TypeScript SDK (installed by
// `make test` from package-lock.json). It connects to toolscout over stdio
// or Streamable HTTP, runs a fixed script of calls and prints one JSON
// object with what the server answered, for the Go test to check.
//
//   node e2e_client.mjs stdio BINARY ARG...
//   node e2e_client.mjs http URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: rest, stderr: "inherit" });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(target));
} else {
  console.error("usage: e2e_client.mjs stdio BINARY ARG... | http URL");
  process.exit(2);
}

const client = new Client({ name: "toolscout-e2e", version: "1.0.0" });
await client.connect(transport);
const out = {
  server: client.getServerVersion(),
  instructions: client.getInstructions(),
  tools: (await client.listTools()).tools.map((t) => ({ name: t.name, annotations: t.annotations })),
  contents: (await client.callTool({ name: "discover_tools", arguments: {} })).structuredContent,
  query: (await client.callTool({ name: "discover_tools", arguments: { query: "restart the web deployment", limit: 3 } })).structuredContent,
  domain: (await client.callTool({ name: "discover_tools", arguments: { domain: "weather" } })).structuredContent,
  schema: (await client.callTool({ name: "get_tool_schema", arguments: { tool_name: "kubernetes__rollout_restart" } })).structuredContent,
  unknown: await client.callTool({ name: "get_tool_schema", arguments: { tool_name: "kubernetes__rollout_restrt" } }),
};
console.log(JSON.stringify(out));
await client.close();
