// End-to-end gateway check with the official TypeScript SDK client:
// toolscout serves an upstream server (server-memory) and the client
// creates an entity through execute_tool and reads it back.
//
//   node e2e_gateway.mjs BINARY ARG...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, ...args] = process.argv.slice(2);
const client = new Client({ name: "toolscout-e2e-gateway", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: bin, args, stderr: "inherit" }));
const call = async (name, a) => (await client.callTool({ name, arguments: a }));
const out = {
  tools: (await client.listTools()).tools.map((t) => t.name),
  discover: (await call("discover_tools", { query: "add facts to an entity in the knowledge graph", limit: 3 })).structuredContent,
  create: await call("execute_tool", { tool_name: "memory__create_entities", arguments: { entities: [{ name: "Ana", entityType: "person", observations: ["owns the billing service"] }] } }),
  read: await call("execute_tool", { tool_name: "memory__open_nodes", arguments: { names: ["Ana"] } }),
};
console.log(JSON.stringify(out));
await client.close();
