// End-to-end check of a large catalog through the official TypeScript
// SDK: the instructions, and the domain listing paged with next_cursor
// until the end. Prints one JSON object for the Go test.
//
//   node e2e_scale.mjs BINARY ARG...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, ...args] = process.argv.slice(2);
const client = new Client({ name: "toolscout-e2e-scale", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: bin, args, stderr: "inherit" }));
const pages = [];
let cursor;
for (let i = 0; i < 100; i++) {
  const res = await client.callTool({ name: "discover_tools", arguments: cursor ? { cursor } : {} });
  const page = res.structuredContent;
  pages.push({ names: page.domains.map((d) => d.name), total: page.total_domains, bytes: JSON.stringify(page).length, next: page.next_cursor ?? null });
  cursor = page.next_cursor;
  if (!cursor) break;
}
const bad = await client.callTool({ name: "discover_tools", arguments: { cursor: "not-a-cursor" } });
console.log(JSON.stringify({ instructions: client.getInstructions(), pages, bad }));
await client.close();
