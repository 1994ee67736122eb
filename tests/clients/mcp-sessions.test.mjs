// The official MCP TypeScript SDK keeps its sessions with `vaultask serve`
// across the server dropping their state and across a restart. Run by
// cmd/vaultask/mcp_sessions_test.go with VAULTASK_URL and VAULTASK_KEY
// against a serve that keeps one session's state (mcp.max_sessions 1):
// it prints a line {"step": …, "sessions": […]} and waits for a line on
// stdin before going on, while the test drops the sessions' state
// ("evict") or restarts serve ("restart"); then it ends a session, which
// is over. Journal/ is personal.
import assert from "node:assert/strict";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const PERSONAL = "zebrafinch"; // a word only personal notes hold
const headers = { Authorization: `Bearer ${process.env.VAULTASK_KEY}` };
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const connect = async (query) => {
  const transport = new StreamableHTTPClientTransport(new URL(process.env.VAULTASK_URL + "/mcp" + query), { requestInit: { headers } });
  const client = new Client({ name: "vaultask-sessions-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
};
// whole: a session of the whole vault; open: one opened on
// /mcp?allow_web=true, open notes only for its whole life.
const whole = await connect("");
const open = await connect("?allow_web=true");

// Each session, asked without allow_web, reads what its scope holds: the
// whole vault's a personal note, the open one nothing personal, in its
// tools, its resource reads and its resource listing.
const check = async (when) => {
  const personal = await whole.client.callTool({ name: "vault_read", arguments: { path: "Journal/2026-11-30" } });
  assert.ok(!personal.isError && JSON.stringify(personal).includes(PERSONAL), `${when}: the whole vault's session: ${JSON.stringify(personal)}`);
  const refused = await open.client.callTool({ name: "vault_read", arguments: { path: "Journal/2026-11-30" } });
  assert.ok(refused.isError && !JSON.stringify(refused).includes(PERSONAL), `${when}: the open session read a personal note: ${JSON.stringify(refused)}`);
  const search = await open.client.callTool({ name: "vault_search", arguments: { query: "a zebrafinch cage for the spare room", k: 20 } });
  assert.ok(!search.isError, `${when}: ${JSON.stringify(search)}`);
  assert.ok(!JSON.stringify(search).includes("Journal/"), `${when}: the open session found a personal note`);
  const listed = await open.client.listResources();
  assert.ok(listed.resources.length > 0 && !listed.resources.some((r) => r.name.startsWith("Journal/")), `${when}: ${JSON.stringify(listed)}`);
  const wholeListed = await whole.client.listResources();
  assert.ok(wholeListed.resources.some((r) => r.name.startsWith("Journal/")), `${when}: the whole vault lists no personal note`);
};

const step = async (name) => {
  console.log(JSON.stringify({ step: name, sessions: [whole.transport.sessionId, open.transport.sessionId] }));
  const { done } = await lines.next();
  assert.ok(!done, `stdin closed before ${name} was done`);
};

await check("at first");
await step("evict");
await check("after the server dropped both sessions' state");
await step("restart");
await check("after serve restarted");

// A session the client ends (DELETE) is over: its id is answered 404 from
// then on, as the transport spec requires; the other session goes on.
const endedId = whole.transport.sessionId;
await whole.transport.terminateSession();
assert.equal(whole.transport.sessionId, undefined, "the SDK let go of the ended session");
for (const method of ["ping", "resources/list"]) {
  const resp = await fetch(process.env.VAULTASK_URL + "/mcp", {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Session-Id": endedId },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: {} }),
  });
  assert.equal(resp.status, 404, `${method} in the session its client ended: ${resp.status} ${await resp.text()}`);
}
await open.client.ping();

await whole.client.close();
await open.client.close();
console.log(JSON.stringify({ ok: true }));
process.exit(0);
