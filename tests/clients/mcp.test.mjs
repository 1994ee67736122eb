// The official MCP TypeScript SDK against `vaultask serve` over streamable
// HTTP. Run by cmd/vaultask/clients_test.go with VAULTASK_URL and
// VAULTASK_KEY; the test vault has notes under Journal/ that are personal,
// among them a topic note, an alias and a namesake of an open note.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.VAULTASK_URL + "/mcp");
const transport = new StreamableHTTPClientTransport(url, {
  requestInit: { headers: { Authorization: `Bearer ${process.env.VAULTASK_KEY}` } },
});
const client = new Client({ name: "vaultask-test", version: "1.0.0" });
await client.connect(transport);
assert.ok(client.getInstructions().length < 2048, "instructions fit Claude Code");

const PERSONAL = "zebrafinch"; // a word only personal notes hold

// Every tool: read-only, closed-world annotations, a title, both schemas.
const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name).sort(), ["vault_neighbors", "vault_read", "vault_search", "vault_topics"]);
for (const t of tools) {
  assert.deepEqual(
    [t.annotations.readOnlyHint, t.annotations.destructiveHint, t.annotations.idempotentHint, t.annotations.openWorldHint],
    [true, false, true, false], t.name);
  assert.ok(t.title && t.annotations.title, `${t.name} has a title`);
  assert.equal(t.inputSchema.type, "object");
  assert.equal(t.outputSchema.type, "object", `${t.name} has an output schema`);
  assert.ok(t.inputSchema.properties.allow_web, `${t.name} takes allow_web`);
}

const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args });
  const text = r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  return { ...r, text };
};
const noPersonal = (what, r) => {
  const all = JSON.stringify(r);
  assert.ok(!all.includes(PERSONAL) && !all.includes("Journal/"), `${what} shows a personal note: ${all}`);
};

// vault_search: hits with provenance, text and resource links to the notes.
let r = await call("vault_search", { query: "how long do I knead the sourdough" });
assert.ok(!r.isError, r.text);
assert.ok(r.structuredContent.hits.length > 0);
assert.equal(r.structuredContent.hits[0].path, "Recipes/Sourdough bread.md");
assert.ok(r.structuredContent.hits[0].provenance.length > 0);
assert.match(r.text, /\[\[Recipes\/Sourdough bread\|/);
const link = r.content.find((c) => c.type === "resource_link");
assert.equal(link.uri, "vault://note/Recipes/Sourdough%20bread.md");

// The whole vault by default; open notes only with allow_web.
r = await call("vault_search", { query: "a cage for the spare room" });
assert.ok(r.structuredContent.hits.some((h) => h.path.startsWith("Journal/")), "the default sees personal notes");
r = await call("vault_search", { query: "a cage for the spare room", allow_web: true, k: 20 });
noPersonal("vault_search allow_web=true", r);

// vault_read by path, by name, by alias; pages of a long note.
r = await call("vault_read", { path: "recipes/sourdough BREAD" });
assert.ok(!r.isError && r.structuredContent.text.includes("Knead the dough"), r.text);
r = await call("vault_read", { path: "Loaf" });
assert.equal(r.structuredContent.path, "Recipes/Sourdough bread.md", "an alias resolves");
r = await call("vault_read", { path: "Recipes/Long.md", limit: 100 });
assert.equal(r.structuredContent.text.length, 100);
assert.ok(r.structuredContent.more && r.structuredContent.length > 100);
const page2 = await call("vault_read", { path: "Recipes/Long.md", offset: 100, limit: 100 });
assert.equal(page2.structuredContent.offset, 100);

// A personal note does not exist for allow_web: not by path, name, alias or
// namesake. Its refusal is word for word the refusal of a note that was
// never written, so it tells nothing; without allow_web it reads.
const missing = await call("vault_read", { path: "No such note", allow_web: true });
assert.ok(missing.isError, missing.text);
for (const path of ["Journal/2026-11-30.md", "Journal/2026-11-30", "2026-11-30", "my private day"]) {
  r = await call("vault_read", { path, allow_web: true });
  assert.ok(r.isError, `vault_read ${path} allow_web=true: ${r.text}`);
  assert.equal(r.text, missing.text.replace("No such note", path), `the refusal of ${path} differs from a missing note's`);
  assert.equal(r.structuredContent, undefined);
  r = await call("vault_read", { path });
  assert.ok(!r.isError && r.structuredContent.text.includes(PERSONAL), `vault_read ${path}: ${r.text}`);
}
r = await call("vault_read", { path: "Risotto", allow_web: true });
assert.equal(r.structuredContent.path, "Recipes/Risotto.md", "an open namesake resolves");
noPersonal("the namesake's alternatives", r);
r = await call("vault_read", { path: "Risotto" });
assert.deepEqual([r.structuredContent.path, ...r.structuredContent.also.map((a) => a.path)].sort(),
  ["Journal/Risotto.md", "Recipes/Risotto.md"], "without allow_web both namesakes: one read, one named as an alternative");

// vault_neighbors: links, backlinks, topics, members, siblings; personal
// ones gone with allow_web.
r = await call("vault_neighbors", { path: "Recipes/Sourdough bread.md" });
const rels = new Set(r.structuredContent.neighbors.map((n) => n.relation));
assert.ok(rels.has("link") && rels.has("topic") && rels.has("sibling"), JSON.stringify(r.structuredContent));
assert.ok(r.structuredContent.neighbors.some((n) => n.path.startsWith("Journal/")));
r = await call("vault_neighbors", { path: "Recipes/Sourdough bread.md", allow_web: true });
noPersonal("vault_neighbors allow_web=true", r);
r = await call("vault_neighbors", { path: "99 topics/Baking.md", allow_web: true });
assert.ok(r.structuredContent.neighbors.some((n) => n.relation === "member"));
noPersonal("the topic's members with allow_web", r);

// vault_topics: the member counts only count what the scope sees.
r = await call("vault_topics", {});
const all = Object.fromEntries(r.structuredContent.topics.map((t) => [t.path, t.members]));
r = await call("vault_topics", { allow_web: true });
noPersonal("vault_topics allow_web=true", r);
const open = Object.fromEntries(r.structuredContent.topics.map((t) => [t.path, t.members]));
assert.ok(all["99 topics/Baking.md"] > open["99 topics/Baking.md"], `${JSON.stringify(all)} vs ${JSON.stringify(open)}`);

// Resources: notes by vault://note/{+path}, under the same gate.
const res = await client.readResource({ uri: "vault://note/Recipes/Sourdough%20bread.md" });
assert.match(res.contents[0].text, /Knead the dough/);
assert.equal(res.contents[0].mimeType, "text/markdown");
const personal = await client.readResource({ uri: "vault://note/Journal/2026-11-30.md" });
assert.match(personal.contents[0].text, new RegExp(PERSONAL));
// A note that is not there, or not for this caller, is the resources spec's
// "resource not found" (-32002), naming the URI.
const refusal = async (uri) => {
  try {
    await client.readResource({ uri });
  } catch (e) {
    assert.equal(e.code, -32002, `${uri}: ${e.message}`);
    assert.equal(e.data?.uri, uri);
    return e.message;
  }
  assert.fail(`${uri} was read`);
};
await refusal("vault://note/Recipes/No%20such.md");
assert.equal(
  await refusal("vault://note/Journal/2026-11-30.md?allow_web=true"),
  (await refusal("vault://note/Journal/No%20such.md?allow_web=true")).replace("No such", "2026-11-30"),
  "a personal note's resource refusal differs from a missing note's");
// resources/list: the topic notes, then the notes most recently changed
// first, each readable; an endpoint with ?allow_web=true lists open notes.
const listed = await client.listResources();
assert.ok(listed.resources.some((r) => r.name === "99 topics/Baking.md"), JSON.stringify(listed.resources));
assert.ok(listed.resources.some((r) => r.name.startsWith("Journal/")), "the whole vault lists personal notes");
const first = await client.readResource({ uri: listed.resources[0].uri });
assert.ok(first.contents[0].text.length > 0);
const openTransport = new StreamableHTTPClientTransport(new URL(process.env.VAULTASK_URL + "/mcp?allow_web=true"), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.VAULTASK_KEY}` } },
});
const openClient = new Client({ name: "vaultask-test-open", version: "1.0.0" });
await openClient.connect(openTransport);
const openListed = await openClient.listResources();
assert.ok(openListed.resources.length > 0);
noPersonal("resources/list on /mcp?allow_web=true", openListed);
for (const r of openListed.resources) {
  noPersonal(`resources/read ${r.uri}`, await openClient.readResource({ uri: r.uri }));
}
await openClient.close();
const templates = await client.listResourceTemplates();
assert.equal(templates.resourceTemplates[0].uriTemplate, "vault://note/{+path}");

// Mistakes are tool errors the model can read.
r = await call("vault_search", {});
assert.ok(r.isError && /query is required/.test(r.text), r.text);
r = await call("vault_search", { query: "x", k: 100 });
assert.ok(r.isError && /k must be/.test(r.text), r.text);

await client.close();
console.log(JSON.stringify({ ok: true }));
