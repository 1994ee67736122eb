// /admin: the settings /admin may change, saved to the overrides file for
// the next start, and the feed's and the index's health. Everything it
// shows comes from endpoints behind the admin key; the page itself holds
// no data.

const KEY = "vaultask.admin-key";
const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
}

// What the page says about each key; a key it does not know still shows, by its path.
const GROUPS = [
  ["Models", [
    ["models.generation", "Generation model", "provider/name; pick one or type any model id"],
    ["models.generation_verdict", "… asked first whether the passages answer", "its verdict decides the web search and the silent answer; off: the coverage judgement alone, for a model too small to judge"],
    ["models.rerank", "Rerank model", "empty: no reranking"],
  ]],
  ["Web", [
    ["web.enabled", "Search the web when the vault's hits are thin", "only for questions that allow the web, which then see open notes only"],
    ["web.provider", "Web search provider", ""],
  ]],
  ["Retrieval", [
    ["retrieval.vector_top_k", "Vector search hits", ""],
    ["retrieval.fts_top_k", "Full-text search hits", ""],
    ["retrieval.fusion_top_k", "Kept after fusion", "at most vector + full-text hits"],
    ["retrieval.fusion", "Fusion ranks", "chunk: each chunk on its own; note: a note's best chunk places it"],
    ["retrieval.fts_weight", "Full-text weight in the fusion", "the vector list weighs 1; more than 0, at most 10"],
    ["retrieval.fusion_by", "Fuse the searches by", "rank: reciprocal rank fusion; score: a convex combination of normalised scores; auto: the one measured better with the embedding model"],
    ["retrieval.vector_weight", "… the vector arm's weight when by score", "0 to 1; auto: the one measured for the embedding model"],
    ["retrieval.note_support", "… a note's second chunk adds to its first", "share of its score, when by score; 0: none"],
    ["retrieval.graph_enabled", "Follow [[links]] from the hits", ""],
    ["retrieval.graph_max_siblings", "Linked notes per hit", ""],
    ["retrieval.graph_discount", "Score factor of linked notes", "more than 0, at most 1"],
    ["retrieval.graph_max_slots", "Context slots linked notes may take", "at most the chunks in the context"],
    ["retrieval.graph_member_slots", "More slots for a hit topic note's clippings", "only notes its clippings region links to"],
    ["retrieval.graph_map_slots", "More slots behind a hit map of content", "for the note it links to nearest the question; 0: none"],
    ["retrieval.graph_map_min_links", "… a map of content links to at least", "notes the caller may see"],
    ["retrieval.vector_max_distance", "Farthest vector hit that votes", "cosine distance; 0: no limit"],
    ["retrieval.vector_query", "What vector search embeds", "question: as asked; keywords: without stopwords"],
    ["retrieval.confident_bonus", "Bonus for an arm's confident first note", "in first-rank votes; 0: none"],
    ["retrieval.confident_fts_margin", "… full text is confident at a BM25 lead of", "share of the first note's BM25; auto: the one measured with the embedding model"],
    ["retrieval.confident_vector_gap", "… vector search is confident at a gap of", "cosine distance; auto: the one measured for the embedding model"],
    ["retrieval.language_vote_cut", "Vote lost by a note in another language", "for Swedish or Turkish questions; 0: none, 1: all"],
    ["retrieval.coverage_thin", "The vault is thin on a question below", "the probability that it answers it; auto: fitted for the embedding model"],
    ["retrieval.coverage_silent", "… and silent below", "at most the thin line; auto: fitted for the embedding model"],
    ["retrieval.bm25_title", "Full-text weight of the title", "0 leaves the field out"],
    ["retrieval.bm25_aliases", "… of the aliases", ""],
    ["retrieval.bm25_headings", "… of the headings", ""],
    ["retrieval.bm25_path", "… of the folder path", ""],
    ["retrieval.bm25_topics", "… of the topic notes' titles", ""],
    ["retrieval.bm25_body", "… of the text", ""],
    ["retrieval.bm25_links", "… of what linking notes say", ""],
    ["retrieval.rerank_top_k", "Candidates reranked", "at least the chunks in the context"],
    ["retrieval.final_top_k", "Chunks in the answer's context", ""],
    ["retrieval.max_chunks_per_doc", "Chunks per note in the context", "0: no cap"],
  ]],
];
const CHOICES = { "retrieval.fusion": ["chunk", "note"], "retrieval.fusion_by": ["auto", "rank", "score"], "retrieval.vector_query": ["question", "keywords"] };

let state = null; // GET /admin/config
let tab = "incomplete";

class HTTPError extends Error {
  constructor(status, body) {
    super(body?.error?.message || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function api(path, opts = {}) {
  const resp = await fetch(path, { ...opts, headers: { ...(opts.headers || {}), "X-API-Key": sessionStorage.getItem(KEY) || "" } });
  let body = null;
  try {
    body = await resp.json();
  } catch {
    body = null;
  }
  if (!resp.ok) throw new HTTPError(resp.status, body);
  return body;
}

// ---------- unlocking ----------

function locked(message) {
  sessionStorage.removeItem(KEY);
  $("console").hidden = true;
  $("lock").hidden = true;
  $("unlock").hidden = false;
  $("unlock-error").textContent = message || "";
  $("admin-key").focus();
}

async function unlock() {
  try {
    state = await api("/admin/config");
  } catch (e) {
    if (e.status === 401 || e.status === 429 || e.status === 503) {
      locked(e.message);
      return;
    }
    locked("vaultask could not be reached: " + e.message);
    return;
  }
  $("unlock").hidden = true;
  $("console").hidden = false;
  $("lock").hidden = false;
  renderSettings();
  refreshStatus();
  refreshNotes();
}

$("unlock-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const key = $("admin-key").value;
  if (!key) return;
  sessionStorage.setItem(KEY, key);
  $("admin-key").value = "";
  unlock();
});
$("lock").addEventListener("click", () => locked(""));

// ---------- status ----------

const fmt = new Intl.NumberFormat();
function time(s) {
  if (!s || s.startsWith("0001")) return "never";
  const d = new Date(s);
  if (d.toDateString() === new Date().toDateString()) return d.toLocaleTimeString();
  return d.toLocaleString([], { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}
function bytes(n) {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function group(title, health, rows) {
  const dl = el("dl");
  for (const [k, v] of rows) if (v !== null && v !== undefined && v !== "") dl.append(el("dt", {}, k), el("dd", {}, String(v)));
  return el("div", {}, el("h3", {}, el("span", { class: "dot " + health[0], "aria-hidden": "true" }), title, el("span", { class: "visually-hidden" }, ": " + health[1])), dl);
}

// seconds is a duration in seconds as "1 h 2 min", "9 min 24 s" or "40 s".
function seconds(n) {
  const h = Math.floor(n / 3600), m = Math.floor((n % 3600) / 60), s = Math.round(n % 60);
  return h ? `${h} h ${m} min` : m ? `${m} min ${s} s` : `${s} s`;
}

function embedderHealth(em) {
  if (em.state === "unavailable" || em.state === "failing") return ["bad", em.state];
  return ["ok", em.state];
}

function feedHealth(f) {
  if (f.stopped) return ["bad", "stopped: " + f.stopped];
  if (f.failing) return ["bad", "failing"];
  if (!f.caught_up) return ["warn", "catching up"];
  return ["ok", "live"];
}

function renderStatus(st) {
  const f = st.feed, ix = st.index, em = st.embedder, rc = st.reconcile;
  const feedState = f.stopped ? "stopped: " + f.stopped
    : f.failing ? `failing since ${time(f.last_error_at)}`
    : f.scanning && f.scan_total ? `catching up: ${fmt.format(f.scan_done)} of ${fmt.format(f.scan_total)}`
    : f.caught_up ? "live" : "catching up";
  $("status").replaceChildren(
    group("Feed", feedHealth(f), [
      ["state", feedState],
      ["source", f.source],
      ["database", f.database],
      ["last sequence", f.last_seq ? f.last_seq.split("-")[0] : ""],
      ["behind by", f.lag >= 0 ? `${fmt.format(f.lag)} changes` : ""],
      ["last change", time(f.last_change_at)],
      ["last error", f.last_error],
    ]),
    group("Index", ix.incomplete_notes || ix.skipped_notes ? ["warn", "some notes not indexed"] : ["ok", "healthy"], [
      ["notes", fmt.format(ix.notes)],
      ["open", fmt.format(ix.open_notes)],
      ["personal", fmt.format(ix.personal_notes)],
      ["chunks", fmt.format(ix.chunks)],
      ["vectors", fmt.format(ix.vectors)],
      ["waiting to embed", fmt.format(ix.embedding_backlog)],
      ["of them embedded, held for the rest of their notes", ix.embedding_staged ? fmt.format(ix.embedding_staged) : ""],
      ["pending", fmt.format(ix.pending_notes)],
      ["incomplete", fmt.format(ix.incomplete_notes)],
      ["skipped", fmt.format(ix.skipped_notes)],
      ["file", bytes(ix.file_bytes)],
    ]),
    group("Embedder", embedderHealth(em), [
      ["model", em.model],
      ["state", em.state],
      ["embedded since start", fmt.format(em.embedded)],
      ["rate", em.chunks_per_second ? `${em.chunks_per_second.toFixed(1)} chunks/s` : ""],
      ["time left", em.seconds_left ? seconds(em.seconds_left) : ""],
      ["questions searched by", ix.vector_search ? "vector and full text" : "full text only"],
      ["last error", em.last_error],
    ]),
    group("Reconcile", ["ok", "scheduled"], [
      ["last run", time(rc.last_run)],
      ["took", rc.last_run ? `${rc.took_seconds.toFixed(1)} s` : ""],
      ["added", rc.last_run ? fmt.format(rc.added) : ""],
      ["changed", rc.last_run ? fmt.format(rc.changed) : ""],
      ["removed", rc.last_run ? fmt.format(rc.removed) : ""],
      ["next run", time(rc.next_run)],
    ]),
  );
  $("tab-incomplete").textContent = `Incomplete (${fmt.format(ix.incomplete_notes)})`;
  $("tab-skipped").textContent = `Skipped (${fmt.format(ix.skipped_notes)})`;
  $("status-when").textContent = `version ${st.version} · updated ${new Date().toLocaleTimeString()}`;
}

async function refreshStatus() {
  if ($("console").hidden) return;
  try {
    renderStatus(await api("/status"));
    $("status-error").textContent = "";
  } catch (e) {
    if (e.status === 401 || e.status === 429) return locked(e.message);
    $("status-error").textContent = "The status could not be read: " + e.message;
  }
}

async function refreshNotes() {
  if ($("console").hidden) return;
  const panel = $("notes-panel");
  try {
    const list = await api(`/status/notes?state=${tab}&limit=200`);
    if (!list.notes.length) {
      panel.replaceChildren(el("p", { class: "muted" }, tab === "incomplete" ? "No incomplete notes: every note's text arrived whole." : "No skipped notes."));
      return;
    }
    const items = list.notes.map((n) => el("li", {}, el("span", { class: "path" }, n.path), el("span", { class: "reason" }, n.reason || n.state)));
    panel.replaceChildren(el("ul", { class: "notes" }, ...items));
    if (list.total > list.notes.length) panel.append(el("p", { class: "muted small" }, `Showing ${list.notes.length} of ${fmt.format(list.total)}.`));
  } catch (e) {
    panel.replaceChildren(el("p", { class: "error-text" }, "The list could not be read: " + e.message));
  }
}

function selectTab(name) {
  tab = name;
  for (const t of ["incomplete", "skipped"]) {
    const b = $("tab-" + t);
    b.setAttribute("aria-selected", String(t === name));
    b.tabIndex = t === name ? 0 : -1;
  }
  $("notes-panel").setAttribute("aria-labelledby", "tab-" + name);
  refreshNotes();
}
$("tab-incomplete").addEventListener("click", () => selectTab("incomplete"));
$("tab-skipped").addEventListener("click", () => selectTab("skipped"));
document.querySelector(".tabs").addEventListener("keydown", (e) => {
  if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
  const next = tab === "incomplete" ? "skipped" : "incomplete";
  selectTab(next);
  $("tab-" + next).focus();
});

// ---------- settings ----------

const show = (v) => (typeof v === "string" ? (v === "" ? "(empty)" : v) : String(v));
const fieldId = (path) => "f-" + path.replace(/\W/g, "-");

function renderBanner() {
  const b = $("restart-banner");
  b.className = "banner" + (state.pending_restart ? " pending" : "");
  const changed = state.settings.filter((s) => s.running !== s.next);
  if (state.overrides_error) {
    b.replaceChildren(state.overrides_error);
    b.className = "banner pending";
  } else if (state.pending_restart) {
    b.replaceChildren(
      "Saved changes are waiting for a restart of vaultask.",
      changed.length ? el("ul", {}, ...changed.map((s) => el("li", {}, el("code", {}, s.path), `: ${show(s.running)} → ${show(s.next)}`))) : null,
    );
  } else {
    b.replaceChildren("vaultask runs with the saved settings. Changes you save here apply on restart.");
  }
  $("overrides-file").textContent = state.overrides_file;
}

function control(s) {
  const id = fieldId(s.path);
  const common = { id, name: s.path, "aria-describedby": `${id}-help ${id}-err`, disabled: s.env ? true : null };
  if (s.type === "boolean") {
    const c = el("input", { type: "checkbox", ...common });
    c.checked = s.next;
    return c;
  }
  if (s.path === "web.provider") {
    const sel = el("select", common);
    for (const p of state.web_providers) {
      sel.append(el("option", { value: p.name, disabled: p.ready ? null : true }, p.ready ? p.name : `${p.name} (set ${p.key_env})`));
    }
    sel.value = s.next;
    return sel;
  }
  if (CHOICES[s.path]) {
    // A value the list lacks is offered as it is, so that saving another
    // field never changes this one behind the user's back.
    const choices = CHOICES[s.path].includes(String(s.next)) ? CHOICES[s.path] : [String(s.next), ...CHOICES[s.path]];
    const sel = el("select", common, ...choices.map((v) => el("option", { value: v }, v)));
    sel.value = s.next;
    return sel;
  }
  const input = el("input", {
    type: "text", ...common, autocomplete: "off", spellcheck: "false",
    inputmode: s.type === "integer" ? "numeric" : s.type === "number" ? "decimal" : null,
    list: s.path === "models.generation" ? "generation-models" : null,
  });
  input.value = String(s.next);
  return input;
}

function renderSettings() {
  renderBanner();
  $("generation-models").replaceChildren(...state.generation_models.map((m) => el("option", { value: m })));
  const byPath = new Map(state.settings.map((s) => [s.path, s]));
  const known = new Set();
  const groups = GROUPS.map(([title, keys]) => {
    const fs = el("fieldset", { class: "group" }, el("legend", {}, title));
    for (const [path, label, help] of keys) {
      known.add(path);
      if (byPath.has(path)) fs.append(settingRow(byPath.get(path), label, help));
    }
    return fs;
  });
  const others = state.settings.filter((s) => !known.has(s.path));
  if (others.length) {
    const fs = el("fieldset", { class: "group" }, el("legend", {}, "Other"));
    others.forEach((s) => fs.append(settingRow(s, s.path, "")));
    groups.push(fs);
  }
  $("fields").replaceChildren(...groups);
}

function settingRow(s, label, help) {
  const id = fieldId(s.path);
  const c = el("div", { class: "control" }, control(s));
  if (s.env) c.append(el("span", { class: "note env" }, `set by ${s.env}`));
  else if (s.running !== s.next) c.append(el("span", { class: "note" }, `running now: ${show(s.running)}`));
  return el(
    "div",
    { class: "setting", "data-path": s.path },
    el("label", { for: id }, label),
    el("span", { class: "help", id: `${id}-help` }, help ? `${help} · ` : "", el("code", {}, s.path)),
    c,
    el("p", { class: "field-error", id: `${id}-err`, role: "alert" }),
  );
}

/** value reads a field as the JSON it sends: numbers that parse as numbers, anything else as typed. */
function value(s, input) {
  if (s.type === "boolean") return input.checked;
  const text = input.value.trim();
  if (s.type === "integer" && /^-?\d+$/.test(text)) return Number(text);
  if (s.type === "number" && text !== "" && !Number.isNaN(Number(text))) return Number(text);
  return s.type === "string" ? input.value.trim() : input.value;
}

function changes() {
  const doc = {};
  let n = 0;
  for (const s of state.settings) {
    const input = $(fieldId(s.path));
    if (!input || s.env) continue;
    const v = value(s, input);
    if (v === s.next) continue;
    const [section, key] = s.path.split(/\.(.*)/);
    (doc[section] ||= {})[key] = v;
    n++;
  }
  return [doc, n];
}

function clearErrors() {
  $("form-error").hidden = true;
  for (const row of document.querySelectorAll(".setting")) {
    row.classList.remove("invalid");
    row.querySelector(".field-error").textContent = "";
    row.querySelector("[name]").removeAttribute("aria-invalid");
  }
}

function showErrors(errors) {
  const general = [];
  let first = null;
  for (const e of errors) {
    const rows = (e.fields || []).map((f) => document.querySelector(`.setting[data-path="${CSS.escape(f)}"]`)).filter(Boolean);
    if (!rows.length) general.push(e.message);
    for (const row of rows) {
      row.classList.add("invalid");
      const p = row.querySelector(".field-error");
      p.textContent = p.textContent ? `${p.textContent} ${e.message}` : e.message;
      row.querySelector("[name]").setAttribute("aria-invalid", "true");
      first ||= row.querySelector("[name]");
    }
  }
  if (general.length) {
    $("form-error").replaceChildren(el("ul", {}, ...general.map((m) => el("li", {}, m))));
    $("form-error").hidden = false;
  }
  (first || $("form-error")).focus();
}

$("settings-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  clearErrors();
  const [doc, n] = changes();
  if (!n) {
    $("save-state").textContent = "Nothing to save: no setting changed.";
    return;
  }
  $("save").disabled = true;
  $("save-state").textContent = "Saving…";
  try {
    state = await api("/admin/config", { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify(doc) });
    renderSettings();
    $("save-state").textContent = `Saved ${n} ${n === 1 ? "change" : "changes"}. They apply when vaultask restarts.`;
  } catch (err) {
    if (err.status === 401 || err.status === 429) return locked(err.message);
    $("save-state").textContent = "Not saved.";
    showErrors(err.body?.errors || [{ fields: [], message: err.message }]);
  } finally {
    $("save").disabled = false;
  }
});
$("discard").addEventListener("click", () => {
  clearErrors();
  renderSettings();
  $("save-state").textContent = "";
});

setInterval(() => {
  if (document.visibilityState === "visible") refreshStatus();
}, 5000);

if (sessionStorage.getItem(KEY)) unlock();
else locked("");
