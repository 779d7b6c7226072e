// A client on the official TypeScript SDK (installed by `make test`) for
// TestStructuredAnswersTypeScript: it connects over Streamable HTTP with
// the client name given (and, with "capable", the experimental
// capability by which a client says it reads structuredContent), asks
// get_tool_schema for one tool and prints what came back.
//
//   node structured_client.mjs URL NAME [capable]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, name, capable] = process.argv.slice(2);
const capabilities = capable ? { experimental: { "io.github.toolscout/structured-content": {} } } : {};
const client = new Client({ name, version: "1.0.0" }, { capabilities });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const res = await client.callTool({ name: "get_tool_schema", arguments: { tool_name: "github__create_issue" } });
console.log(JSON.stringify({ content: res.content, structured: res.structuredContent }));
await client.close();
