// /chat: conversations kept in this browser, answers streamed from
// /v1/chat/completions, freshness from /events and /status. Answer text is
// untrusted (notes hold clipped web pages), so it is never parsed as HTML:
// a small Markdown subset is turned into DOM nodes, text as text nodes.

const STORE = "vaultask.conversations";
const KEY = "vaultask.key";
const $ = (id) => document.getElementById(id);

/** el builds an element; strings among children become text nodes. */
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
}

const svgNS = "http://www.w3.org/2000/svg";
function icon(d) {
  const s = document.createElementNS(svgNS, "svg");
  s.setAttribute("viewBox", "0 0 24 24");
  s.setAttribute("aria-hidden", "true");
  const p = document.createElementNS(svgNS, "path");
  p.setAttribute("d", d);
  s.append(p);
  return s;
}
const NOTE_ICON = "M7 3h7l4 4v14H7zM14 3v4h4";
const WARN_ICON = "M12 4 3 20h18zM12 10v4m0 3v.5";
const COPY_ICON = "M9 9h10v10H9zM5 15V5h10";

// ---------- the API ----------

class AuthError extends Error {}
let settings = { obsidian_vault: "" };

async function api(path, opts = {}) {
  const headers = { ...(opts.headers || {}) };
  const key = sessionStorage.getItem(KEY);
  if (key) headers.Authorization = "Bearer " + key;
  const resp = await fetch(path, { ...opts, headers });
  if (resp.status === 401) throw new AuthError(await errorText(resp));
  return resp;
}

async function errorText(resp) {
  try {
    const body = await resp.json();
    return body.error?.message || `${resp.status} ${resp.statusText}`;
  } catch {
    return `${resp.status} ${resp.statusText}`;
  }
}

let keyWaiters = [];
function askForKey(message) {
  return new Promise((resolve) => {
    keyWaiters.push(resolve);
    const dialog = $("key-dialog");
    $("key-error").textContent = message;
    if (!dialog.open) dialog.showModal();
    $("key-input").focus();
  });
}
$("key-form").addEventListener("submit", (e) => {
  const key = $("key-input").value.trim();
  if (!key) {
    e.preventDefault();
    return;
  }
  sessionStorage.setItem(KEY, key);
  $("key-input").value = "";
  const waiting = keyWaiters;
  keyWaiters = [];
  waiting.forEach((resolve) => resolve());
});
$("key-dialog").addEventListener("cancel", (e) => e.preventDefault());

/** authed runs fn, asking for the API key whenever the server wants one. */
async function authed(fn) {
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof AuthError)) throw e;
      const had = sessionStorage.getItem(KEY);
      sessionStorage.removeItem(KEY);
      await askForKey(had ? "That key was not accepted." : "");
    }
  }
}

/** readSSE calls onEvent with each event of a Server-Sent Events body. */
async function readSSE(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const frame = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const ev = { event: "message", data: "", id: null };
      const data = [];
      for (const line of frame.split("\n")) {
        const colon = line.indexOf(":");
        if (colon === 0) continue;
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") data.push(val);
        else if (field === "event") ev.event = val;
        else if (field === "id") ev.id = val;
      }
      if (data.length) {
        ev.data = data.join("\n");
        onEvent(ev);
      }
    }
  }
}

// ---------- Markdown, safely ----------

const SCHEMES = ["http:", "https:", "obsidian:"];
function safeHref(href) {
  try {
    const u = new URL(href);
    return SCHEMES.includes(u.protocol) ? u.href : null;
  } catch {
    return null;
  }
}

const LIST = /^( {0,3})([-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$/;
const QUOTE = /^ {0,3}> ?/;
const RULE = /^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$/;
const blank = (l) => /^\s*$/.test(l);
const startsBlock = (l) => FENCE.test(l) || HEADING.test(l) || QUOTE.test(l) || LIST.test(l) || RULE.test(l);

/** blocks renders lines of Markdown as block elements. */
function blocks(lines, ctx) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (blank(line)) {
      i++;
    } else if ((m = FENCE.exec(line))) {
      const body = [];
      for (i++; i < lines.length && !lines[i].trimStart().startsWith(m[1]); i++) body.push(lines[i]);
      i++;
      out.push(el("pre", {}, el("code", {}, body.join("\n"))));
    } else if ((m = HEADING.exec(line))) {
      out.push(el(m[1].length <= 2 ? "h3" : "h4", {}, ...inline(m[2], ctx)));
      i++;
    } else if (RULE.test(line)) {
      out.push(el("hr"));
      i++;
    } else if (QUOTE.test(line)) {
      const body = [];
      for (; i < lines.length && QUOTE.test(lines[i]); i++) body.push(lines[i].replace(QUOTE, ""));
      out.push(el("blockquote", {}, ...blocks(body, ctx)));
    } else if ((m = LIST.exec(line))) {
      i = list(lines, i, ctx, out);
    } else if ((m = tableAt(lines, i))) {
      i = table(lines, i, m, ctx, out);
    } else {
      const para = [line];
      for (i++; i < lines.length && !blank(lines[i]) && !startsBlock(lines[i]) && !tableAt(lines, i); i++) para.push(lines[i]);
      out.push(el("p", {}, ...inline(para.join("\n"), ctx)));
    }
  }
  return out;
}

/** list renders the list starting at lines[i] into out; it returns the next line's index. */
function list(lines, i, ctx, out) {
  const first = LIST.exec(lines[i]);
  const ordered = /\d/.test(first[2]);
  const node = el(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) node.setAttribute("start", parseInt(first[2], 10));
  while (i < lines.length) {
    const m = LIST.exec(lines[i]);
    if (!m || /\d/.test(m[2]) !== ordered) break;
    const indent = m[1].length + m[2].length + 1;
    const item = [m[3]];
    for (i++; i < lines.length; i++) {
      const l = lines[i];
      if (blank(l)) {
        let j = i + 1;
        while (j < lines.length && blank(lines[j])) j++;
        if (j < lines.length && /^ {2,}\S/.test(lines[j])) {
          item.push("");
          continue;
        }
        break;
      }
      const lead = l.length - l.trimStart().length;
      if (lead >= 2) item.push(l.slice(Math.min(lead, indent)));
      else if (startsBlock(l)) break;
      else item.push(l);
    }
    const inner = blocks(item, ctx);
    const li = el("li");
    if (inner[0]?.tagName === "P") li.append(...inner.shift().childNodes);
    li.append(...inner);
    node.append(li);
    // A blank line between items keeps the list going.
    let j = i;
    while (j < lines.length && blank(lines[j])) j++;
    const next = j < lines.length && LIST.exec(lines[j]);
    if (!next || /\d/.test(next[2]) !== ordered) break;
    i = j;
  }
  out.push(node);
  return i;
}

const DELIMITER = /^\s*(:?)-+(:?)\s*$/;
const WIKILINK = /\[\[[^[\]\n]*\]\]/y;

/** tableAt returns the column alignments when lines[i] is a GFM pipe table's
 * header row and lines[i+1] its delimiter row ("| :--- | ---: |"), else null. */
function tableAt(lines, i) {
  const head = lines[i], delimiter = lines[i + 1];
  if (delimiter === undefined || !head.includes("|") || !delimiter.includes("|")) return null;
  const aligns = cells(delimiter).map((c) => DELIMITER.exec(c));
  if (aligns.some((a) => !a) || aligns.length !== cells(head).length) return null;
  return aligns.map(([, left, right]) => (left && right ? "center" : right ? "right" : left ? "left" : null));
}

/** table renders the table starting at lines[i] into out, inside a box that
 * scrolls sideways, so a wide one never widens the page on a phone; it
 * returns the next line's index. A row, as in GFM, runs until a blank line
 * or another block; its missing cells are empty, its extra ones dropped. */
function table(lines, i, aligns, ctx, out) {
  const row = (line, tag) => {
    const texts = cells(line);
    return el("tr", {}, ...aligns.map((align, n) => el(tag, { "data-align": align }, ...inline(texts[n] ?? "", ctx))));
  };
  const head = el("thead", {}, row(lines[i], "th"));
  const rows = [];
  for (i += 2; i < lines.length && !blank(lines[i]) && !startsBlock(lines[i]); i++) rows.push(row(lines[i], "td"));
  out.push(el("div", { class: "table-wrap", tabindex: "0" }, el("table", {}, head, rows.length ? el("tbody", {}, ...rows) : null)));
  return i;
}

/** cells splits a table row at its pipes; an escaped pipe ("\|") is text, as
 * is a pipe inside a wikilink: Obsidian wants [[note\|alias]] in a table,
 * but a model citing [[note|alias]] there means one cell, not two. */
function cells(line) {
  const s = line.trim().replace(/^\|/, "");
  const out = [];
  let cell = "", split = false;
  for (let i = 0; i < s.length; i++) {
    WIKILINK.lastIndex = i;
    const link = s[i] === "[" && WIKILINK.exec(s);
    if (link) {
      cell += link[0].replace(/\\\|/g, "|");
      i = WIKILINK.lastIndex - 1;
    } else if (s[i] === "\\" && i + 1 < s.length) {
      cell += s[i + 1] === "|" ? "|" : s[i] + s[i + 1];
      i++;
    } else if (s[i] === "|") {
      out.push(cell.trim());
      cell = "";
      split = true;
      continue;
    } else {
      cell += s[i];
    }
    split = false;
  }
  // A row's closing pipe ends its last cell; it does not open another.
  if (!split || !out.length) out.push(cell.trim());
  return out;
}

const UNVERIFIED = " (unverified citation)";
const INLINE = [
  [/\\([\\`*_{}[\]()#+\-.!<>~|])/y, (m) => [document.createTextNode(m[1])]],
  [/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/y, (m) => [el("code", {}, m[2].replace(/^ (.*) $/, "$1"))]],
  [/!?\[\[([^[\]\n]+?)\]\]/y, (m, ctx) => [citation(m[1], ctx)]],
  [/\[((?:[^[\]\n]|\[[^[\]\n]*\])*)\]\(\s*<?([^\s<>]*?)>?(?:\s+"[^"\n]*")?\s*\)/y, (m, ctx) => [link(m[2], inline(m[1], ctx))]],
  [/<([a-z][a-z0-9+.-]*:[^\s<>]+)>/iy, (m) => [link(m[1], [document.createTextNode(m[1])])]],
  // The inline HTML notes use for what Markdown lacks, which Obsidian
  // renders: these elements, made anew without their attributes; any other
  // tag, or one left open (its text holds no closing tag before the same
  // tag opens again), stays text.
  [/<br\s*\/?>/iy, () => [el("br")]],
  [/<(u|sup|sub|kbd|mark)(?:\s[^<>]*)?>((?:(?!<\1[\s>])[\s\S])*?)<\/\1\s*>/iy, (m, ctx) => [el(m[1].toLowerCase(), {}, ...inline(m[2], ctx))]],
  [/(?<![\w/])https?:\/\/[^\s<>()[\]]*[^\s<>()[\].,;:!?'"*_]/y, (m) => [link(m[0], [document.createTextNode(m[0])])]],
  [/\*\*(?=\S)([\s\S]*?\S)\*\*/y, (m, ctx) => [el("strong", {}, ...inline(m[1], ctx))]],
  [/(?<![\p{L}\p{N}])__(?=\S)([\s\S]*?\S)__(?![\p{L}\p{N}])/uy, (m, ctx) => [el("strong", {}, ...inline(m[1], ctx))]],
  [/~~(?=\S)([\s\S]*?\S)~~/y, (m, ctx) => [el("del", {}, ...inline(m[1], ctx))]],
  [/\*(?=[^\s*])([\s\S]*?[^\s*])\*(?!\*)/y, (m, ctx) => [el("em", {}, ...inline(m[1], ctx))]],
  [/(?<![\p{L}\p{N}])_(?=[^\s_])([\s\S]*?[^\s_])_(?![\p{L}\p{N}_])/uy, (m, ctx) => [el("em", {}, ...inline(m[1], ctx))]],
];

/** inline renders a paragraph's text as inline nodes. */
function inline(text, ctx) {
  const out = [];
  let buf = "";
  const flush = () => {
    if (buf) out.push(document.createTextNode(buf));
    buf = "";
  };
  outer: for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (c === "\n") {
      // A line break inside a paragraph is a space, as in CommonMark (notes
      // are often wrapped at a fixed width); two spaces before it keep it.
      if (buf.endsWith("  ")) {
        buf = buf.trimEnd();
        flush();
        out.push(el("br"));
      } else {
        buf = buf.trimEnd() + " ";
      }
      i++;
      continue;
    }
    if (text.startsWith(UNVERIFIED, i)) {
      flush();
      out.push(el("span", { class: "unverified", title: "This citation names a note that was not among the passages the answer was given" }, "unverified"));
      i += UNVERIFIED.length;
      continue;
    }
    if ("\\`![<h*_~".includes(c)) {
      for (const [re, make] of INLINE) {
        re.lastIndex = i;
        const m = re.exec(text);
        if (m) {
          flush();
          i = re.lastIndex; // before make, whose inline() reuses re
          out.push(...make(m, ctx));
          continue outer;
        }
      }
    }
    buf += c;
    i++;
  }
  flush();
  return out;
}

function link(href, children) {
  const safe = safeHref(href);
  if (!safe) {
    return el("span", { class: "plain-link", title: "Link not opened: only http, https and obsidian links are" }, ...children);
  }
  return el("a", { href: safe, target: "_blank", rel: "noopener noreferrer nofollow" }, ...children);
}

const lastSegment = (p) => p.split("/").pop();
function notePath(target) {
  return /\.[A-Za-z0-9]{1,5}$/.test(target) ? target : target + ".md";
}

/** citation renders [[target|alias]] as the alias (or the note's name), its path on hover and focus. */
function citation(raw, ctx) {
  const bar = raw.indexOf("|");
  const target = (bar < 0 ? raw : raw.slice(0, bar)).trim();
  const alias = bar < 0 ? "" : raw.slice(bar + 1).trim();
  const [file, heading] = target.split("#");
  const known = ctx.citations.find((c) => c.link === raw);
  const path = known?.path || notePath(file.trim());
  let shown = alias || lastSegment(file.trim());
  if (!alias && heading && !heading.startsWith("^")) shown += " › " + heading.trim();
  if (known?.gone) return droppedCite(shown || path);
  return citeChip(shown || path, path);
}

/** droppedCite is a citation of a note that is gone from what its answer could see: no link, marked removed. */
function droppedCite(shown) {
  return el("span", { class: "cite-wrap" }, el("span", { class: "cite gone" }, icon(NOTE_ICON), el("span", {}, shown)),
    el("span", { class: "unverified", title: "This note is no longer among the notes this answer was given" }, "removed"));
}

let tipSeq = 0;
function citeChip(shown, path, opts = {}) {
  const id = "tip-" + ++tipSeq;
  const tip = el("span", { class: "tip", role: "tooltip", id }, opts.tip || path);
  let btn;
  if (settings.obsidian_vault && !opts.bad) {
    btn = el("a", { class: "cite", href: obsidianURL("open", { file: path }), "aria-describedby": id });
  } else {
    btn = el("button", { type: "button", class: "cite" + (opts.bad ? " bad" : ""), "aria-describedby": id });
    if (!opts.bad) {
      tip.textContent = path + " · click to copy the path";
      btn.addEventListener("click", () => copyText(path).then(() => flash(tip, "Path copied: " + path)));
    }
  }
  btn.append(icon(opts.bad ? WARN_ICON : NOTE_ICON), el("span", {}, shown));
  return el("span", { class: "cite-wrap" }, btn, tip);
}

function flash(tip, text) {
  const before = tip.textContent;
  tip.textContent = text;
  setTimeout(() => (tip.textContent = before), 1500);
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Not a secure context (http on a LAN address): the older way.
    const area = el("textarea", { class: "visually-hidden", readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
}

function obsidianURL(action, params) {
  const q = new URLSearchParams({ vault: settings.obsidian_vault, ...params });
  return `obsidian://${action}?${q.toString().replace(/\+/g, "%20")}`;
}

// ---------- conversations ----------

let convs = [];
let current = null;
let running = null; // { conv, answer, controller } while an answer streams

function loadConversations() {
  try {
    const stored = JSON.parse(localStorage.getItem(STORE));
    convs = Array.isArray(stored) ? stored.filter((c) => c && c.id && Array.isArray(c.messages)) : [];
  } catch {
    convs = [];
  }
}

function saveConversations() {
  try {
    localStorage.setItem(STORE, JSON.stringify(convs.filter((c) => c.messages.length)));
  } catch {
    toast("This browser's storage is full: the conversation is not saved.");
  }
}

function newConversation() {
  return { id: Date.now().toString(36) + Math.random().toString(36).slice(2, 8), title: "", created: Date.now(), updated: Date.now(), personal: true, messages: [] };
}

function titleOf(question) {
  const t = question.replace(/\s+/g, " ").trim();
  return t.length > 60 ? t.slice(0, 57).trimEnd() + "…" : t;
}

function sorted() {
  return [...convs].sort((a, b) => b.updated - a.updated);
}

function when(ms) {
  const d = new Date(ms), now = new Date();
  if (d.toDateString() === now.toDateString()) return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return d.toLocaleDateString([], { day: "numeric", month: "short", year: d.getFullYear() === now.getFullYear() ? undefined : "numeric" });
}

function renderList() {
  const ul = $("conversations");
  ul.replaceChildren(
    ...sorted()
      .filter((c) => c.messages.length)
      .map((c) =>
        el("li", {}, el("a", { href: "#" + c.id, "aria-current": c === current ? "page" : null }, el("span", { class: "conv-name" }, c.title || "Untitled"), el("span", { class: "conv-when" }, when(c.updated)))),
      ),
  );
}

function show(conv) {
  current = conv;
  if (location.hash.slice(1) !== conv.id) history.replaceState(null, "", conv.messages.length ? "#" + conv.id : location.pathname);
  $("include-personal").checked = conv.personal;
  scopeHint();
  followScope();
  renderHeader();
  renderList();
  renderTranscript();
  closeDrawer();
}

function openFromHash() {
  const id = location.hash.slice(1);
  const conv = convs.find((c) => c.id === id) || (id ? null : sorted()[0]);
  show(conv || newConversation());
}

function renderHeader() {
  $("title").textContent = current.title || "New conversation";
  document.title = current.title ? `${current.title} · vaultask` : "vaultask";
  const has = current.messages.length > 0;
  for (const id of ["rename", "export", "delete", "more"]) $(id).hidden = !has;
  $("save-obsidian").hidden = !has || !settings.obsidian_vault;
}

function renderTranscript() {
  const msgs = current.messages;
  $("welcome").hidden = msgs.length > 0;
  $("messages").replaceChildren(...msgs.map((m, i) => messageEl(current, m, i)));
  scrollToEnd(true);
}

function renderMessage(conv, index) {
  if (conv !== current) return;
  const old = $("messages").children[index];
  if (old) old.replaceWith(messageEl(conv, conv.messages[index], index));
}

function badge(cls, text) {
  return el("span", { class: "badge " + cls }, text);
}

/** coverageBadge says how well the vault covers the question, when it does not plainly answer it: thin, silent, still indexing, or near the line (grey). */
function coverageBadge(meta) {
  const c = meta.coverage || {};
  const says = {
    thin: "The vault says little on this",
    silent: "The vault is silent on this",
    indexing: "Still indexing the vault",
  }[c.outcome];
  const b = says ? badge("coverage " + c.outcome, says) : c.grey ? badge("coverage grey", "The vault may not answer all of this") : null;
  if (b && meta.verdict) b.title = "The answering model's verdict: " + meta.verdict.verdict + (meta.verdict.missing ? " (missing: " + meta.verdict.missing + ")" : "");
  return b;
}

function messageEl(conv, m, index) {
  if (m.role === "user") return el("li", { class: "msg user" }, el("div", { class: "bubble" }, m.content));
  const meta = m.meta || {};
  const ctx = { citations: meta.citations || [] };
  const streaming = m.state === "streaming";
  const li = el("li", { class: "msg assistant" + (streaming ? " streaming" : ""), "aria-busy": streaming ? "true" : null });
  const head = el("div", { class: "answer-head" }, el("span", { class: "who" }, "vaultask"));
  head.append(m.scope === "open" ? badge("open", "Open notes · web allowed") : badge("personal", "Personal notes included"));
  if (meta.extractive) head.append(badge("passages", "Retrieved passages"));
  const covered = coverageBadge(meta);
  if (covered) head.append(covered);
  if (m.state === "stopped") head.append(badge("stopped", "Stopped"));
  const body = el("div", { class: "md" });
  if (m.content) body.append(...blocks(m.content.split("\n"), ctx));
  else if (streaming) body.append(el("p", { class: "thinking" }, "Searching your vault…"));
  li.append(head, body);
  if (m.state === "error") li.append(el("p", { class: "failed", role: "alert" }, "The answer failed: " + m.error));
  if (!streaming) li.append(...sources(m, meta), ...degradations(m, meta), answerFoot(conv, m, index));
  return li;
}

function sources(m, meta) {
  const out = [];
  const seen = new Set();
  const chips = [];
  for (const c of meta.citations || []) {
    if (c.gone) continue;
    const key = (c.verified ? "ok:" : "bad:") + (c.path || c.link);
    if (seen.has(key)) continue;
    seen.add(key);
    const bar = c.link.indexOf("|");
    const shown = bar >= 0 ? c.link.slice(bar + 1).trim() : lastSegment(c.link.split("#")[0]);
    chips.push(
      c.verified
        ? citeChip(shown, c.path || notePath(c.link))
        : citeChip(shown + " · unverified", c.link, { bad: true, tip: `Unverified: [[${c.link}]] is ${c.reason || "not checked"}` }),
    );
  }
  if (chips.length) out.push(el("div", { class: "sources" }, el("h3", {}, "Sources"), el("ul", { class: "chips" }, ...chips.map((c) => el("li", {}, c)))));
  const web = (meta.web || []).filter((w) => safeHref(w.url));
  if (web.length && !/^#+ From the web/m.test(m.content)) {
    const links = web.map((w) => el("li", {}, el("a", { class: "web", href: safeHref(w.url), target: "_blank", rel: "noopener noreferrer nofollow" }, w.title || w.url, el("span", {}, new URL(w.url).host))));
    out.push(el("div", { class: "sources" }, el("h3", {}, "From the web"), el("ul", { class: "chips" }, ...links)));
  }
  return out;
}

function degradations(m, meta) {
  const notes = (meta.notes || []).filter((n) => !m.content.includes(n));
  if (!notes.length) return [];
  return [el("ul", { class: "notes-list" }, ...notes.map((n) => el("li", {}, n)))];
}

function answerFoot(conv, m, index) {
  const foot = el("div", { class: "answer-foot" });
  if (m.content) {
    const label = el("span", {}, "Copy");
    const copy = el("button", { type: "button", class: "btn" }, icon(COPY_ICON), label);
    copy.addEventListener("click", () => copyText(m.content).then(() => (label.textContent = "Copied")));
    foot.append(copy);
  }
  if ((m.state === "error" || m.state === "stopped") && index === conv.messages.length - 1) {
    const retry = el("button", { type: "button", class: "btn" }, "Retry");
    retry.addEventListener("click", () => {
      const question = conv.messages[index - 1].content;
      conv.messages.splice(index - 1, 2);
      ask(question);
    });
    foot.append(retry);
  }
  return foot;
}

function scrollToEnd(force) {
  const t = $("transcript");
  if (force || t.scrollHeight - t.scrollTop - t.clientHeight < 120) t.scrollTop = t.scrollHeight;
}

// ---------- asking ----------

async function ask(question) {
  const conv = current;
  if (!conv.messages.length) {
    conv.title ||= titleOf(question);
    if (!convs.includes(conv)) convs.push(conv);
  }
  const messages = conv.messages.filter((m) => m.content && m.state !== "error").map((m) => ({ role: m.role, content: m.content }));
  messages.push({ role: "user", content: question });
  const answer = { role: "assistant", content: "", scope: conv.personal ? "all" : "open", state: "streaming", at: Date.now() };
  conv.messages.push({ role: "user", content: question, at: Date.now() }, answer);
  conv.updated = Date.now();
  saveConversations();
  if (conv === current && location.hash.slice(1) !== conv.id) history.replaceState(null, "", "#" + conv.id);
  renderHeader();
  renderList();
  renderTranscript();
  const index = conv.messages.length - 1;
  const controller = new AbortController();
  running = { conv, answer, controller };
  setStreaming(true);
  let painted = false;
  const paint = () => {
    if (painted) return;
    painted = true;
    requestAnimationFrame(() => {
      painted = false;
      renderMessage(conv, index);
      if (conv === current) scrollToEnd(false);
    });
  };
  try {
    const resp = await authed(() =>
      api("/v1/chat/completions", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ model: "vault-ask", stream: true, allow_web: !conv.personal, messages }),
        signal: controller.signal,
      }),
    );
    if (!resp.ok) throw new Error(await errorText(resp));
    await readSSE(resp.body, ({ data }) => {
      if (data === "[DONE]") return;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message);
      const delta = chunk.choices?.[0]?.delta?.content;
      if (delta) {
        answer.content += delta;
        paint();
      }
      if (chunk.vaultask) answer.meta = chunk.vaultask;
    });
    answer.state = answer.meta ? "done" : "error";
    if (!answer.meta) answer.error = "the answer ended early.";
  } catch (e) {
    if (controller.signal.aborted) answer.state = "stopped";
    else {
      answer.state = "error";
      answer.error = e instanceof TypeError ? "vaultask could not be reached." : e.message;
    }
  } finally {
    running = null;
    conv.updated = Date.now();
    saveConversations();
    setStreaming(false);
    renderMessage(conv, index);
    renderList();
    if (conv === current) scrollToEnd(false);
  }
}

function setStreaming(on) {
  $("send").hidden = on;
  $("stop").hidden = !on;
  if (!on && document.activeElement === document.body) $("question").focus();
}

function stop() {
  running?.controller.abort();
}

// ---------- conversation actions ----------

function toMarkdown(conv) {
  const parts = [`# ${conv.title}`, `*Asked vaultask, ${new Date(conv.created).toLocaleString()}*`];
  for (const m of conv.messages) {
    if (m.role === "user") parts.push("## " + m.content.replace(/\s+/g, " ").trim());
    else {
      const scope = m.scope === "open" ? "open notes only, web allowed" : "personal notes included";
      parts.push(`${m.content.trim() || "*(no answer)*"}\n\n*vaultask · ${scope}${m.state === "stopped" ? " · stopped" : ""}*`);
    }
  }
  return parts.join("\n\n") + "\n";
}

function fileName(title) {
  return (title || "vaultask").replace(/[\\/:*?"<>|#^[\]]+/g, " ").replace(/\s+/g, " ").trim().slice(0, 80) || "vaultask";
}

function exportMarkdown() {
  const url = URL.createObjectURL(new Blob([toMarkdown(current)], { type: "text/markdown;charset=utf-8" }));
  const a = el("a", { href: url, download: fileName(current.title) + ".md" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function saveToObsidian() {
  const a = el("a", { href: obsidianURL("new", { file: "vaultask/" + fileName(current.title), content: toMarkdown(current) }) });
  document.body.append(a);
  a.click();
  a.remove();
}

function startRename() {
  $("title").hidden = true;
  $("actions").hidden = true;
  $("more").hidden = true;
  $("rename-form").hidden = false;
  $("rename-input").value = current.title;
  $("rename-input").focus();
  $("rename-input").select();
}

function endRename(keep) {
  if ($("rename-form").hidden) return;
  const name = $("rename-input").value.trim();
  if (keep && name) {
    current.title = name;
    saveConversations();
  }
  $("rename-form").hidden = true;
  $("title").hidden = false;
  $("actions").hidden = false;
  renderHeader();
  renderList();
  $("rename").focus();
}

function deleteCurrent() {
  const conv = current;
  if (running?.conv === conv) stop();
  convs = convs.filter((c) => c !== conv);
  saveConversations();
  history.replaceState(null, "", location.pathname);
  show(sorted()[0] || newConversation());
  toast(`Deleted “${conv.title}”.`, {
    label: "Undo",
    run: () => {
      convs.push(conv);
      saveConversations();
      show(conv);
    },
  });
}

function toast(text, action) {
  const t = el("div", { class: "toast" }, el("span", {}, text));
  const close = () => t.remove();
  if (action) {
    const b = el("button", { type: "button" }, action.label);
    b.addEventListener("click", () => {
      close();
      action.run();
    });
    t.append(b);
  }
  const x = el("button", { type: "button", "aria-label": "Dismiss" }, "✕");
  x.addEventListener("click", close);
  t.append(x);
  $("toasts").append(t);
  setTimeout(close, 8000);
}

// ---------- the phone: the drawer, the actions menu ----------

function toggleMenu(open) {
  $("actions").classList.toggle("open", open);
  $("more").setAttribute("aria-expanded", String(open));
  if (open) $("actions").querySelector("button:not([hidden])").focus();
}


function openDrawer() {
  $("app").classList.add("drawer-open");
  $("scrim").hidden = false;
  $("open-sidebar").setAttribute("aria-expanded", "true");
  $("new-chat").focus();
}

function closeDrawer() {
  if (!$("app").classList.contains("drawer-open")) return;
  $("app").classList.remove("drawer-open");
  $("scrim").hidden = true;
  $("open-sidebar").setAttribute("aria-expanded", "false");
  $("open-sidebar").focus();
}

// ---------- freshness ----------

const fresh = { status: null, reachable: true, events: "connecting", lastChange: 0, lastNote: "", lastId: null, failingSince: 0 };
const fmt = new Intl.NumberFormat();

function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 2) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

function paintFreshness() {
  const st = fresh.status;
  let state = "warn", text = "connecting…";
  if (!fresh.reachable) {
    state = "bad";
    text = "vaultask unreachable · retrying";
  } else if (st) {
    const f = st.feed;
    const source = f.source === "folder" ? "the vault folder" : "CouchDB";
    if (f.failing) fresh.failingSince ||= Date.parse(f.last_error_at) || Date.now();
    else fresh.failingSince = 0;
    if (st.index_error) {
      state = "bad";
      text = "index unreadable · see the server's log";
    } else if (f.stopped) {
      state = "bad";
      text = "not following the vault · see the server's log";
    } else if (f.failing) {
      state = "bad";
      text = `${source} unreachable since ${new Date(fresh.failingSince).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}`;
    } else if (f.scanning && f.scan_total > 0) {
      text = `catching up ${fmt.format(f.scan_done)}/${fmt.format(f.scan_total)}`;
    } else if (!f.caught_up) {
      text = "catching up…";
    } else {
      state = fresh.events === "live" ? "ok" : "warn";
      text = `${fresh.events === "live" ? "live" : "reconnecting"} · ${fmt.format(st.index.notes)} notes`;
      if (fresh.lastChange) text += ` · last change ${ago(fresh.lastChange)}`;
    }
  }
  $("freshness").querySelector(".dot").className = "dot " + state;
  $("freshness-text").textContent = text;
  $("freshness").title = fresh.lastNote ? `Last change: ${fresh.lastNote}` : "";
}

let statusTimer = 0;
function refreshStatusSoon() {
  clearTimeout(statusTimer);
  statusTimer = setTimeout(refreshStatus, 150);
}

async function refreshStatus() {
  try {
    const resp = await authed(() => api("/status"));
    if (!resp.ok) throw new Error(await errorText(resp));
    fresh.status = await resp.json();
    fresh.reachable = true;
    const changed = Date.parse(fresh.status.feed.last_change_at);
    if (changed) fresh.lastChange = Math.max(fresh.lastChange, Math.min(changed, Date.now()));
  } catch {
    fresh.reachable = false;
  }
  paintFreshness();
}

function onServerEvent({ event, data, id }) {
  if (id) fresh.lastId = id;
  let body = {};
  try {
    body = JSON.parse(data);
  } catch {
    return;
  }
  if (event.startsWith("note.")) {
    fresh.lastChange = Date.now();
    fresh.lastNote = body.title || body.path;
    noticeCited(body, event);
  }
  if (event === "shutdown") fresh.events = "reconnecting";
  refreshStatusSoon();
}

/** noticeCited tells of a change to a note the conversation cites. A note
 * removed from what the stream sees is gone for every answer of that scope:
 * from the vault for all of them, from the open notes (it became personal,
 * or was removed: the stream of open notes only does not say which) for the
 * answers of open notes only. Their citations of it are dropped. */
function noticeCited(note, event) {
  const open = following?.open;
  const removed = event === "note.removed";
  const cited = [];
  current.messages.forEach((m, i) => {
    for (const c of m.meta?.citations || []) {
      if (c.verified && !c.gone && c.path === note.path && (!removed || !open || m.scope === "open")) cited.push([i, c]);
    }
  });
  if (!cited.length) return;
  const name = note.title || lastSegment(note.path).replace(/\.md$/, "");
  if (!removed) {
    toast(`“${name}”, cited here, was just re-indexed: ask again for an answer from its new text.`);
    return;
  }
  for (const [, c] of cited) c.gone = true;
  saveConversations();
  for (const i of new Set(cited.map(([i]) => i))) renderMessage(current, i);
  toast(open ? `“${name}”, cited here, is no longer among your open notes: its citation is dropped.` : `“${name}”, cited here, was just removed from the vault: its citation is dropped.`);
}

// following is the /events stream the page reads: { open, controller }.
// It follows the scope of the conversation shown, so that a conversation of
// open notes only hears of open notes alone, and of one that leaves them.
let following = null;

async function followEvents() {
  let delay = 1000;
  for (;;) {
    const open = !current.personal;
    const controller = new AbortController();
    following = { open, controller };
    try {
      const headers = fresh.lastId ? { "Last-Event-ID": fresh.lastId } : {};
      const resp = await authed(() => api(open ? "/events?allow_web=true" : "/events", { headers, signal: controller.signal }));
      if (!resp.ok) throw new Error(await errorText(resp));
      fresh.events = "live";
      delay = 1000;
      refreshStatus();
      await readSSE(resp.body, onServerEvent);
    } catch {
      // Retried below: the server restarts, the laptop sleeps, the phone changes networks.
    }
    if (controller.signal.aborted) continue; // the scope changed: follow the new one at once
    fresh.events = "reconnecting";
    paintFreshness();
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 15000);
  }
}

/** followScope switches the stream to the scope of the conversation shown; event ids are the scope's own. */
function followScope() {
  if (!following || following.open === !current.personal) return;
  fresh.lastId = null;
  following.controller.abort();
}

// ---------- wiring ----------

function scopeHint() {
  $("scope-hint").textContent = $("include-personal").checked ? "whole vault, no web" : "open notes only, web allowed";
}

function autosize() {
  const q = $("question");
  q.style.height = "auto";
  q.style.height = Math.min(q.scrollHeight, 192) + "px";
}

$("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  const q = $("question").value.trim();
  if (!q || running) return;
  $("question").value = "";
  autosize();
  ask(q);
});
$("question").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    $("composer").requestSubmit();
  }
});
$("question").addEventListener("input", autosize);
$("include-personal").addEventListener("change", () => {
  current.personal = $("include-personal").checked;
  scopeHint();
  followScope();
  saveConversations();
});
$("stop").addEventListener("click", stop);
$("new-chat").addEventListener("click", () => {
  history.replaceState(null, "", location.pathname);
  show(newConversation());
  $("question").focus();
});
$("rename").addEventListener("click", startRename);
$("rename-form").addEventListener("submit", (e) => {
  e.preventDefault();
  endRename(true);
});
$("rename-input").addEventListener("keydown", (e) => {
  if (e.key === "Escape") endRename(false);
});
$("rename-input").addEventListener("blur", () => endRename(true));
$("export").addEventListener("click", exportMarkdown);
$("save-obsidian").addEventListener("click", saveToObsidian);
$("delete").addEventListener("click", deleteCurrent);
$("more").addEventListener("click", () => toggleMenu(!$("actions").classList.contains("open")));
$("actions").addEventListener("click", () => toggleMenu(false));
document.addEventListener("click", (e) => {
  if (!e.target.closest("#actions, #more")) toggleMenu(false);
});
$("open-sidebar").addEventListener("click", openDrawer);
$("close-sidebar").addEventListener("click", closeDrawer);
$("scrim").addEventListener("click", closeDrawer);
document.addEventListener("keydown", (e) => {
  if (e.key !== "Escape") return;
  if ($("actions").classList.contains("open")) {
    toggleMenu(false);
    $("more").focus();
  } else if (running) stop();
  else closeDrawer();
});
window.addEventListener("hashchange", openFromHash);
window.addEventListener("storage", (e) => {
  if (e.key !== STORE || running) return;
  loadConversations();
  const id = current.id;
  show(convs.find((c) => c.id === id) || sorted()[0] || newConversation());
});

loadConversations();
openFromHash();
setInterval(paintFreshness, 1000);
authed(async () => {
  const resp = await api("/chat/config");
  if (!resp.ok) throw new Error(await errorText(resp));
  return resp.json();
})
  .then((s) => {
    settings = s;
    renderHeader();
    renderTranscript();
  })
  .catch(() => {})
  .finally(() => {
    refreshStatus();
    followEvents();
  });
