// The official openai SDK against `vaultask serve`. Run by
// cmd/vaultask/clients_test.go with VAULTASK_URL (the server), VAULTASK_KEY
// (its API key), QUESTION (one the test vault answers) and PERSONAL_QUESTION
// (one a personal note answers). Prints one JSON line of timings for the Go
// test, which compares them with the fake upstream's own, and checks what
// went upstream for PERSONAL_QUESTION.
import assert from "node:assert/strict";
import OpenAI from "openai";

const baseURL = process.env.VAULTASK_URL + "/v1";
const client = new OpenAI({ baseURL, apiKey: process.env.VAULTASK_KEY, maxRetries: 0 });
const question = process.env.QUESTION;

// The one model, listed.
const models = await client.models.list();
assert.deepEqual(models.data.map((m) => m.id), ["vault-ask"]);
assert.equal(models.data[0].owned_by, "vaultask");

// Without streaming: a standard completion whose answer cites the vault.
const done = await client.chat.completions.create({
  model: "vault-ask",
  messages: [{ role: "user", content: question }],
  temperature: 0.3,
  user: "test-user",
});
assert.equal(done.object, "chat.completion");
assert.equal(done.choices[0].finish_reason, "stop");
assert.equal(done.choices[0].message.role, "assistant");
assert.match(done.choices[0].message.content, /\[\[[^\]]+\]\]/, "the answer cites a note");
assert.ok(done.usage.total_tokens > 0, "usage is reported");

// Streaming with the usage chunk: deltas as they come, one id, then stop.
const start = Date.now();
const stream = await client.chat.completions.create({
  model: "vault-ask",
  messages: [{ role: "user", content: [{ type: "text", text: question }] }],
  stream: true,
  stream_options: { include_usage: true },
});
let firstDeltaAt = 0, text = "", finish = null, usage = null, ids = new Set(), roles = [];
for await (const chunk of stream) {
  ids.add(chunk.id);
  if (chunk.usage) usage = chunk.usage;
  for (const c of chunk.choices) {
    if (c.delta.role) roles.push(c.delta.role);
    if (c.delta.content) {
      if (!firstDeltaAt) firstDeltaAt = Date.now();
      text += c.delta.content;
    }
    if (c.finish_reason) finish = c.finish_reason;
  }
}
const streamEndAt = Date.now();
assert.equal(ids.size, 1, "every chunk carries the same id");
assert.deepEqual(roles, ["assistant"], "the role comes once, first");
assert.equal(finish, "stop");
assert.ok(usage && usage.total_tokens > 0, "the include_usage chunk comes last");
assert.match(text, /\[\[[^\]]+\]\]/);

// Follow-up: the whole transcript goes each turn.
const followUp = await client.chat.completions.create({
  model: "vault-ask",
  messages: [
    { role: "user", content: question },
    { role: "assistant", content: done.choices[0].message.content },
    { role: "user", content: "and for how long?" },
  ],
});
assert.equal(followUp.choices[0].finish_reason, "stop");

// Errors in OpenAI's shape, as the SDK's error classes.
await assert.rejects(
  client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "x" }] }),
  (e) => e instanceof OpenAI.NotFoundError && e.code === "model_not_found" && /vault-ask/.test(e.message),
);
await assert.rejects(
  client.chat.completions.create({ model: "vault-ask", messages: [] }),
  (e) => e instanceof OpenAI.BadRequestError && e.param === "messages",
);
// What vaultask never gives is refused, naming the field.
for (const [param, asked] of Object.entries({
  functions: { functions: [{ name: "lookup", parameters: { type: "object" } }] },
  function_call: { function_call: { name: "lookup" } },
  logprobs: { logprobs: true, top_logprobs: 2 },
  modalities: { modalities: ["text", "audio"], audio: { voice: "alloy", format: "wav" } },
})) {
  await assert.rejects(
    client.chat.completions.create({ model: "vault-ask", messages: [{ role: "user", content: question }], ...asked }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === param && e.message.includes(param),
    `a request with ${param} is refused naming it`,
  );
}
// allow_web in the base URL's query, where the SDK's defaultQuery (and a
// proxy) puts it on every request: open notes only, streamed or not; the
// same question without it sees the whole vault.
const personalQuestion = process.env.PERSONAL_QUESTION;
const openOnly = new OpenAI({ baseURL, apiKey: process.env.VAULTASK_KEY, maxRetries: 0, defaultQuery: { allow_web: "true" } });
assert.deepEqual((await openOnly.models.list()).data.map((m) => m.id), ["vault-ask"], "/v1/models takes allow_web in the query");
const whole = await client.chat.completions.create({ model: "vault-ask", messages: [{ role: "user", content: personalQuestion }] });
assert.equal(whole.vaultask.scope, "all");
const open = await openOnly.chat.completions.create({ model: "vault-ask", messages: [{ role: "user", content: personalQuestion }] });
assert.equal(open.vaultask.scope, "open", "?allow_web=true answers from open notes only");
let openStreamScope = null;
for await (const chunk of await openOnly.chat.completions.create({ model: "vault-ask", messages: [{ role: "user", content: personalQuestion }], stream: true })) {
  if (chunk.vaultask) openStreamScope = chunk.vaultask.scope;
}
assert.equal(openStreamScope, "open", "?allow_web=true streams from open notes only");
assert.equal((await openOnly.chat.completions.create({ model: "vault-ask", messages: [{ role: "user", content: question }], allow_web: true })).vaultask.scope, "open",
  "allow_web the same in the query and the body");
await assert.rejects(
  openOnly.chat.completions.create({ model: "vault-ask", messages: [{ role: "user", content: personalQuestion }], allow_web: false }),
  (e) => e instanceof OpenAI.BadRequestError && e.param === "allow_web" && /query.*body/.test(e.message),
  "allow_web=true in the query and false in the body is refused",
);
for (const defaultQuery of [{ ALLOW_WEB: "true" }, { allow_web: "1" }]) {
  const loose = new OpenAI({ baseURL, apiKey: process.env.VAULTASK_KEY, maxRetries: 0, defaultQuery });
  await assert.rejects(
    loose.chat.completions.create({ model: "vault-ask", messages: [{ role: "user", content: personalQuestion }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === "allow_web",
    `${JSON.stringify(defaultQuery)} in the query is refused`,
  );
}
const azure = new OpenAI({ baseURL, apiKey: process.env.VAULTASK_KEY, maxRetries: 0, defaultQuery: { "api-version": "2024-10-21" } });
await assert.rejects(azure.models.list(), (e) => e instanceof OpenAI.BadRequestError && e.param === "api-version" && e.message.includes('"api-version"'),
  "another query parameter is refused, naming it");

const wrongKey = new OpenAI({ baseURL, apiKey: "not-the-key", maxRetries: 0 });
await assert.rejects(wrongKey.models.list(), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);

console.log(JSON.stringify({ start, firstDeltaAt, streamEndAt, text }));
