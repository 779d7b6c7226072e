// Runs a test client's session over stdio (when bin is given: the
// toolscout binary, started with args) and over Streamable HTTP (when
// HTTP_URL is set: a server the Go test started), both at once in this
// one node process, and prints each session's answer as a JSON line,
// stdio's first. session receives a function that makes its transport.
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export async function bothSessions(session, bin, args) {
  const sessions = [];
  if (bin) {
    sessions.push(session(() => new StdioClientTransport({ command: bin, args, env: process.env, stderr: "inherit" })));
  }
  if (process.env.HTTP_URL) {
    sessions.push(session(() => new StreamableHTTPClientTransport(new URL(process.env.HTTP_URL))));
  }
  for (const out of await Promise.all(sessions)) {
    console.log(JSON.stringify(out));
  }
}
