// Lists the tools a toolscout server exposes, through the official
// TypeScript SDK, polling until more than the three meta-tools appear
// (or WAIT_MS passes): for the loading-switch and fallback tests. Prints
// one JSON object for the Go test.
//
//   WAIT_MS=15000 node e2e_tools.mjs BINARY ARG...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, ...args] = process.argv.slice(2);
const client = new Client({ name: "toolscout-e2e-tools", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: bin, args, env: process.env, stderr: "inherit" }));
const deadline = Date.now() + Number(process.env.WAIT_MS ?? 15000);
let tools = (await client.listTools()).tools;
// Tools are added one by one: wait until the list stops growing.
let previous = -1;
while ((tools.length <= 3 || tools.length !== previous) && Date.now() < deadline) {
  previous = tools.length;
  await new Promise((r) => setTimeout(r, 300));
  tools = (await client.listTools()).tools;
}
const discover = await client.callTool({ name: "discover_tools", arguments: { query: "restart the web deployment", limit: 1 } });
console.log(JSON.stringify({ count: tools.length, names: tools.map((t) => t.name), discover }));
await client.close();
