// A client on the official TypeScript SDK for TestClientRequestsTypeScript:
// it declares sampling, elicitation and roots and answers them as a
// user's client would, sets its log level, then runs through toolscout
// the everything server's tools that elicit, sample, ask for roots and
// report progress, and prints what it saw as one JSON object on fd 3.
// Given several places, it does so for each, one after the other, in
// this one process (a node start with the SDK loaded costs more than
// the calls), a line each.
//
//   node asking_client.mjs WHERE...   (WHERE: a URL, Streamable HTTP; or
//                                      stdio, toolscout on its stdin and stdout)
import fs from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

async function session(where) {
  const out = { asked: [], logs: [], progress: [], results: {} };
  const client = new Client(
    { name: "ts-asker", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    out.asked.push("sampling");
    return { model: "ts-model", role: "assistant", content: { type: "text", text: "sampled by ts" } };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    out.asked.push("elicitation");
    return { action: "accept", content: { name: "ts user", check: true } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    out.asked.push("roots");
    return { roots: [{ uri: "file:///home/ts", name: "ts folder" }] };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    out.logs.push({ logger: n.params.logger, data: n.params.data });
  });
  // The stdio transport of the SDK's server side is a plain
  // newline-delimited JSON transport over stdin and stdout: a client can
  // use it to talk to a server on the other end of its pipes.
  const transport = where === "stdio" ? new StdioServerTransport() : new StreamableHTTPClientTransport(new URL(where));
  await client.connect(transport);
  await client.setLoggingLevel("info");

  // Wait for toolscout to list the tools the everything server registers
  // once it knows its client's capabilities.
  for (let i = 0; i < 300; i++) {
    const r = await client.callTool({ name: "get_tool_schema", arguments: { tool_name: "everything__trigger-elicitation-request" } });
    if (!r.isError) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  const text = (r) => (r.content || []).map((c) => c.text || "").join("");
  const run = (tool, args, opts) => client.callTool({ name: "execute_tool", arguments: { tool_name: tool, arguments: args } }, undefined, opts);
  // The roots first: 350 ms after its initialization the everything server
  // asks for the roots by itself and logs "Roots updated" once answered.
  // Asked during a call of this client's, that log can come after the call
  // has ended, when toolscout cannot tell whose it is and drops it; the
  // roots then cached, get-roots-list would not ask (nor log) again. As the
  // first call, get-roots-list asks for them itself (the timed ask came
  // outside any call and was refused, or is still on its way) and logs
  // before it answers.
  out.results.roots = text(await run("everything__get-roots-list", {}));
  out.results.elicitation = text(await run("everything__trigger-elicitation-request", {}));
  out.results.sampling = text(await run("everything__trigger-sampling-request", { prompt: "hi", maxTokens: 10 }));
  out.results.progress = text(
    await run("everything__trigger-long-running-operation", { duration: 0.3, steps: 3 }, {
      onprogress: (p) => out.progress.push(p.progress),
    }),
  );
  return { out, client };
}

for (const where of process.argv.slice(2)) {
  const { out, client } = await session(where);
  fs.writeSync(3, JSON.stringify(out) + "\n");
  await client.close();
}
process.exit(0);
