// End-to-end MCP client built on the official TypeScript SDK (installed by
// `make test` from package-lock.json). It connects to toolscout over stdio
// or Streamable HTTP, runs a fixed script of calls and prints one JSON
// object with what the server answered, for the Go test to check. Given
// both, it runs the two sessions at once (one node start and SDK load)
// and prints a line each, the HTTP session's first.
//
//   node e2e_client.mjs stdio BINARY ARG...
//   node e2e_client.mjs http URL
//   node e2e_client.mjs http URL stdio BINARY ARG...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const argv = process.argv.slice(2);
const places = [];
while (argv.length > 1) {
  const mode = argv.shift();
  if (mode === "http") {
    const url = new URL(argv.shift());
    places.push(() => new StreamableHTTPClientTransport(url));
  } else if (mode === "stdio") {
    const [target, ...rest] = argv.splice(0);
    places.push(() => new StdioClientTransport({ command: target, args: rest, stderr: "inherit" }));
  } else {
    break;
  }
}
if (places.length === 0 || argv.length > 0) {
  console.error("usage: e2e_client.mjs [http URL] [stdio BINARY ARG...]");
  process.exit(2);
}

async function session(transport) {
  const client = new Client({ name: "toolscout-e2e", version: "1.0.0" });
  await client.connect(transport());
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
  await client.close();
  return out;
}

// Every session at once; a line each, in the order of the arguments.
for (const out of await Promise.all(places.map(session))) {
  console.log(JSON.stringify(out));
}
