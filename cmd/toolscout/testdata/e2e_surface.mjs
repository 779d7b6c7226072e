// Prompts and resources through toolscout, with the official TypeScript
// SDK client (protocol 2025-11-25) in front of the everything reference
// server: lists (following nextCursor), gets, reads (a listed resource,
// an expanded template, the upstream's own URI), a completion, unknown names, a
// subscription and its updates, and a resource the upstream adds
// (notifications/resources/list_changed). Prints one JSON object for the
// Go test.
//
// With HTTP_URL set it connects to that Streamable HTTP endpoint (a
// server started by the test) instead of starting BINARY over stdio;
// with both BINARY and HTTP_URL, it runs the two sessions at once (one
// node start and SDK load for both) and prints the stdio session's
// object, then the HTTP session's, a line each.
//
//   node e2e_surface.mjs BINARY ARG...
//   HTTP_URL=http://127.0.0.1:PORT/mcp node e2e_surface.mjs
//   HTTP_URL=http://127.0.0.1:PORT/mcp node e2e_surface.mjs BINARY ARG...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { bothSessions } from "./both_sessions.mjs";
import {
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

// all follows nextCursor to the end of a list.
async function all(list, key) {
  const items = [];
  let cursor;
  do {
    const page = await list(cursor ? { cursor } : {});
    items.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}
const failure = async (p) => {
  try {
    await p;
    return null;
  } catch (e) {
    return { code: e.code, message: e.message };
  }
};
const waitFor = (what, setter, ms) =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    setter(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });

async function session(transport) {
  const client = new Client({ name: "toolscout-e2e-surface", version: "1.0.0" });
  const out = { updated: [], listChanged: 0 };
  let onUpdate = () => {};
  let onListChanged = () => {};
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    out.updated.push(n.params.uri);
    onUpdate();
  });
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    out.listChanged++;
    onListChanged();
  });
  await client.connect(transport());
  out.capabilities = client.getServerCapabilities();

  out.prompts = (await all((p) => client.listPrompts(p), "prompts")).map((p) => p.name);
  out.prompt = await client.getPrompt({ name: "everything__args-prompt", arguments: { city: "Lyon" } });
  out.unknownPrompt = await failure(client.getPrompt({ name: "no-such-prompt" }));
  out.completion = (await client.complete({ ref: { type: "ref/prompt", name: "everything__completable-prompt" }, argument: { name: "department", value: "Eng" } })).completion.values;
  out.resources = (await all((p) => client.listResources(p), "resources")).map((r) => r.uri);
  out.templates = (await all((p) => client.listResourceTemplates(p), "resourceTemplates")).map((t) => t.uriTemplate);
  const doc = "toolscout://everything/demo://resource/static/document/architecture.md";
  out.read = (await client.readResource({ uri: doc })).contents.map((c) => ({ uri: c.uri, chars: (c.text ?? "").length }));
  out.readTemplate = (await client.readResource({ uri: "toolscout://everything/demo://resource/dynamic/text/3" })).contents.map((c) => ({ uri: c.uri, chars: (c.text ?? "").length }));
  out.readRaw = (await client.readResource({ uri: "demo://resource/dynamic/text/3" })).contents.map((c) => ({ uri: c.uri, chars: (c.text ?? "").length }));
  out.unknownResource = await failure(client.readResource({ uri: "toolscout://everything/demo://nothing/here" }));

  await client.subscribeResource({ uri: doc });
  const updated = waitFor("resources/updated", (f) => (onUpdate = f), 15000);
  await client.callTool({ name: "execute_tool", arguments: { tool_name: "everything__toggle-subscriber-updates", arguments: {} } });
  out.gotUpdate = await updated;
  await client.unsubscribeResource({ uri: doc });

  out.listChanged = 0;
  const changed = waitFor("resources/list_changed", (f) => (onListChanged = f), 15000);
  await client.callTool({ name: "execute_tool", arguments: { tool_name: "everything__gzip-file-as-resource", arguments: { name: "note.gz", data: "data:text/plain;base64,aGVsbG8=" } } });
  out.gotListChanged = await changed;
  out.resourcesAfter = (await all((p) => client.listResources(p), "resources")).map((r) => r.uri);
  await client.close();
  return out;
}

const [bin, ...args] = process.argv.slice(2);
await bothSessions(session, bin, args);
