// Clients on the official TypeScript SDK (installed by `make test`) for
// TestStructuredAnswersTypeScript: for each CLIENT given, one after the
// other in this one process (a node start with the SDK loaded costs more
// than the calls), a client connects over Streamable HTTP with that name
// (and, with ":capable" after it, the experimental capability by which a
// client says it reads structuredContent), asks get_tool_schema for one
// tool and prints what came back on a line of its own.
//
//   node structured_client.mjs URL CLIENT...    (CLIENT: NAME or NAME:capable)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, ...clients] = process.argv.slice(2);
for (const spec of clients) {
  const [name, capable] = spec.split(":");
  const capabilities = capable === "capable" ? { experimental: { "io.github.toolscout/structured-content": {} } } : {};
  const client = new Client({ name, version: "1.0.0" }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const res = await client.callTool({ name: "get_tool_schema", arguments: { tool_name: "github__create_issue" } });
  console.log(JSON.stringify({ content: res.content, structured: res.structuredContent }));
  await client.close();
}
