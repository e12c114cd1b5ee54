// The session viewer's one script (docs/viewer.md). Reads the JSON API under
// this page's own path (api/...) and builds the DOM: every string from the
// store is placed with textContent or as an attribute value, never parsed as
// HTML. The one exception is a message's "html": Markdown the server
// rendered with raw HTML disabled and link addresses filtered.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const view = document.getElementById("view");

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  return node;
}

function when(ms) {
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

function label(s) {
  const title = s.title || "(untitled)";
  return s.name ? `[${s.name}] ${title}` : title;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const text = q.toString();
  return text ? "?" + text : "";
}

async function api(path) {
  const res = await fetch("api/" + path, { credentials: "same-origin", cache: "no-store" });
  const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

function show(...nodes) {
  view.replaceChildren(...nodes);
}

function sessionLink(s) {
  return el("a", { href: "#/s/" + encodeURIComponent(s.id), "data-session": s.id }, label(s));
}

// --- the session list -------------------------------------------------------

async function renderList(params) {
  const filters = el("form", { class: "filters", id: "filters" },
    el("label", {}, "cwd ", el("input", { type: "text", name: "cwd", value: params.get("cwd") || "", placeholder: "every directory" })),
    el("label", {}, el("input", { type: "checkbox", name: "archived", value: "1", checked: params.get("archived") === "1" }), " archived"),
    el("label", {}, "per page ", el("input", { type: "number", name: "limit", min: 1, max: 200, value: params.get("limit") || "50" })),
    el("button", { type: "submit" }, "Filter"));
  filters.addEventListener("submit", (e) => {
    e.preventDefault();
    const f = new FormData(filters);
    location.hash = "#/" + query({ cwd: f.get("cwd"), archived: f.get("archived"), limit: f.get("limit") });
  });
  const data = await api("sessions" + query({
    cwd: params.get("cwd"), archived: params.get("archived"),
    limit: params.get("limit"), cursor: params.get("cursor"),
  }));
  const rows = data.sessions.map((s) => el("tr", { "data-id": s.id },
    el("td", { class: "when" }, when(s.updated_at_ms)),
    el("td", {}, sessionLink(s), s.forked_from_session ? el("span", { class: "meta" }, " ⑂ fork") : null),
    el("td", { class: "cwd" }, s.cwd),
    el("td", { class: "meta" }, s.model),
    el("td", {}, el("a", { href: "#/tree/" + encodeURIComponent(s.id), class: "meta" }, "tree"))));
  const table = data.sessions.length
    ? el("table", { class: "sessions", id: "sessions" },
        el("thead", {}, el("tr", {}, el("th", {}, "updated"), el("th", {}, "title"), el("th", {}, "cwd"), el("th", {}, "model"), el("th", {}, ""))),
        el("tbody", {}, ...rows))
    : el("p", { class: "muted", id: "sessions" }, "no sessions");
  const pager = el("p", { class: "pager" });
  if (data.next_cursor) {
    pager.append(el("a", { id: "next-page", href: "#/" + query({
      cwd: params.get("cwd"), archived: params.get("archived"), limit: params.get("limit"), cursor: data.next_cursor,
    }) }, "next page →"));
  }
  if (params.get("cursor")) pager.append(" ", el("a", { href: "#/" + query({ cwd: params.get("cwd"), archived: params.get("archived"), limit: params.get("limit") }) }, "first page"));
  show(el("h1", {}, params.get("archived") === "1" ? "Archived sessions" : "Sessions"), filters, table, pager);
}

// --- search -----------------------------------------------------------------

async function renderSearch(params) {
  const q = params.get("q") || "";
  document.getElementById("search-input").value = q;
  const data = await api("search" + query({ q, cwd: params.get("cwd"), limit: params.get("limit") }));
  const hits = data.hits.map((h) => {
    const snippet = el("div", { class: "snippet" });
    for (const part of h.parts) snippet.append(part.hit ? el("mark", {}, part.text) : document.createTextNode(part.text));
    const where = h.sessions.map((s) => el("li", {}, sessionLink(s), el("span", { class: "meta" }, ` turn ${s.turn} · ${s.cwd}`)));
    return el("div", { class: "hit" }, el("div", { class: "meta" }, h.kind + (h.role ? ` (${h.role})` : "")), snippet, el("ul", {}, ...where));
  });
  show(el("h1", {}, "Search: ", el("q", {}, q)),
    hits.length ? el("div", { id: "hits" }, ...hits) : el("p", { class: "muted", id: "hits" }, "no matches"));
}

// --- one session ------------------------------------------------------------

// A tool's output that is a unified diff (git diff, diff -u) is coloured too.
function looksLikeDiff(text) {
  return /^diff --git /m.test(text) || (/^--- /m.test(text) && /^\+\+\+ /m.test(text) && /^@@ /m.test(text));
}

function textBlock(text, extraClass) {
  if (looksLikeDiff(text)) return diffBlock(text, extraClass);
  return el("pre", { class: "text" + (extraClass ? " " + extraClass : "") }, text);
}

function diffBlock(text, extraClass) {
  const pre = el("pre", { class: "text diff" + (extraClass ? " " + extraClass : "") });
  for (const line of text.split("\n")) {
    let cls = null;
    if (line.startsWith("***") || line.startsWith("+++ ") || line.startsWith("--- ") || line.startsWith("diff --git ")) cls = "file";
    else if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    pre.append(cls ? el("span", { class: cls }, line) : document.createTextNode(line + "\n"));
  }
  return pre;
}

function itemNode(item, outputs) {
  const cls = "item " + (item.role || item.type) + (item.inherited ? " inherited" : "");
  switch (item.type) {
    case "message": {
      const md = el("div", { class: "md" });
      md.innerHTML = item.html; // server-rendered Markdown, raw HTML disabled (markdown_html.h)
      return el("div", { class: cls, "data-item": item.id },
        el("div", { class: "who" }, item.summary ? "compaction summary" : item.role), md);
    }
    case "context":
      return el("details", { class: cls, "data-item": item.id },
        el("summary", {}, `${item.role} context`), el("pre", { class: "text" }, item.text));
    case "reasoning":
      return item.text
        ? el("details", { class: cls, "data-item": item.id }, el("summary", {}, "reasoning"), el("pre", { class: "text" }, item.text))
        : null;
    case "call": {
      const body = item.patch ? diffBlock(item.text) : el("pre", { class: "text" }, item.text);
      const out = outputs.get(item.call_id);
      const details = el("details", { class: "item call", "data-item": item.id },
        el("summary", {}, "tool ", el("code", {}, item.name), " ", el("span", { class: "meta" }, firstLine(item.text))), body);
      if (out) {
        const shown = textBlock(out.text, "output");
        shown.setAttribute("data-item", out.id);
        details.append(el("div", { class: "meta" }, "output"), shown);
        out.shown = true;
      }
      return details;
    }
    case "output":
      return item.shown ? null : el("details", { class: cls, "data-item": item.id }, el("summary", {}, "tool output"), textBlock(item.text));
    case "compaction":
      return el("div", { class: "marker compaction", "data-item": item.id }, "compaction: an encrypted summary from the server replaces what came before");
    case "checkpoint":
      return el("div", { class: "marker compaction", "data-item": item.id },
        `⟲ compacted here: the model's view restarts with the next ${item.replacement_items} items`);
    default:
      return el("div", { class: "meta", "data-item": item.id }, `(${item.text || "unknown"} item)`);
  }
}

function firstLine(text) {
  const line = (text || "").split("\n")[0];
  return line.length > 100 ? line.slice(0, 100) + "…" : line;
}

// Per-turn usage as bars: cached input, uncached input, output, side by side.
function usageChart(turns) {
  const width = 640, height = 160, pad = 28;
  const max = Math.max(1, ...turns.map((t) => Math.max(t.usage.input_tokens, t.usage.output_tokens)));
  const chart = svg("svg", { class: "chart", id: "usage-chart", width, height: height + 20, viewBox: `0 0 ${width} ${height + 20}`, role: "img" });
  const title = svg("title");
  title.textContent = "tokens per turn";
  chart.append(title);
  const slot = (width - pad) / Math.max(1, turns.length);
  const bar = Math.max(2, Math.min(24, slot / 2 - 2));
  const y = (v) => height - (v / max) * (height - 10);
  turns.forEach((t, i) => {
    const x = pad + i * slot + 2;
    const u = t.usage;
    const cached = Math.min(u.cached_input_tokens, u.input_tokens);
    const add = (cls, x0, top, bottom, value) => {
      const r = svg("rect", { class: cls, x: x0, y: y(top), width: bar, height: Math.max(0, y(bottom) - y(top)), "data-turn": i + 1, "data-value": value });
      const tip = svg("title");
      tip.textContent = `turn ${i + 1}: ${cls} ${value}`;
      r.append(tip);
      chart.append(r);
    };
    add("cached", x, cached, 0, cached);
    add("input", x, u.input_tokens, cached, u.input_tokens - cached);
    add("output", x + bar + 1, u.output_tokens, 0, u.output_tokens);
    const t1 = svg("text", { x: x, y: height + 14 });
    t1.textContent = String(i + 1);
    chart.append(t1);
  });
  const top = svg("text", { x: 0, y: 12 });
  top.textContent = String(max);
  chart.append(top);
  return chart;
}

function usageSection(turns) {
  if (!turns.length) return el("p", { class: "muted" }, "no usage recorded");
  const rows = turns.map((t, i) => {
    const u = t.usage;
    const hit = u.input_tokens ? Math.round((100 * u.cached_input_tokens) / u.input_tokens) : 0;
    return el("tr", { "data-turn": i + 1 }, el("td", {}, i + 1), el("td", {}, t.status), el("td", {}, u.input_tokens),
      el("td", {}, u.cached_input_tokens), el("td", {}, `${hit}%`), el("td", {}, u.output_tokens), el("td", {}, u.reasoning_output_tokens));
  });
  return el("section", { id: "usage" }, el("h2", {}, "Usage per turn"),
    el("div", { class: "legend" }, el("span", {}, el("i", { class: "cached" }), "cached input"),
      el("span", {}, el("i", { class: "input" }), "uncached input"), el("span", {}, el("i", { class: "output" }), "output")),
    usageChart(turns),
    el("table", { class: "sessions", id: "usage-table" },
      el("thead", {}, el("tr", {}, ...["turn", "status", "input", "cached", "cache hit", "output", "reasoning"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows)));
}

async function renderSession(id) {
  const data = await api("session/" + encodeURIComponent(id));
  const s = data.session;
  const head = [el("h1", { id: "title" }, label(s)),
    el("p", { class: "meta" }, `${s.id} · ${s.cwd} · ${s.model} · updated ${when(s.updated_at_ms)}${s.archived ? " · archived" : ""} · `,
      el("a", { href: "#/tree/" + encodeURIComponent(s.id), id: "tree-link" }, "fork tree"))];
  if (s.forked_from_session) {
    head.push(el("div", { class: "marker fork", id: "forked-from" }, "⑂ forked from ",
      el("a", { href: "#/s/" + encodeURIComponent(s.forked_from_session) }, s.forked_from_session),
      "; the dimmed items above the fork point belong to it"));
  }
  const outputs = new Map();
  for (const item of data.items) if (item.type === "output") outputs.set(item.call_id, item);
  const forksAt = new Map();
  for (const f of data.forks) {
    const list = forksAt.get(f.forked_from_item) || [];
    list.push(f);
    forksAt.set(f.forked_from_item, list);
  }
  const transcript = el("div", { id: "transcript" });
  for (const item of data.items) {
    if (item.turn_start) transcript.append(el("div", { class: "turn" }, `turn ${item.turn}`));
    const node = itemNode(item, outputs);
    if (node) transcript.append(node);
    for (const f of forksAt.get(item.id) || []) {
      transcript.append(el("div", { class: "marker fork", "data-fork": f.id }, "⑂ branch here: ", sessionLink(f)));
    }
  }
  show(...head, transcript, usageSection(data.turns));
  document.title = label(s) + " · codex sessions";
}

// --- the fork tree ----------------------------------------------------------

async function renderTree(id) {
  const data = await api("tree/" + encodeURIComponent(id));
  const root = el("ul", { class: "tree", id: "tree" });
  const stack = [root];
  for (const n of data.nodes) {
    stack.length = n.depth + 1;
    let parent = stack[n.depth];
    const li = el("li", { class: n.id === data.current ? "current" : null, "data-depth": n.depth },
      sessionLink(n), el("span", { class: "meta" }, ` ${when(n.updated_at_ms)} · ${n.id.slice(0, 8)}`));
    parent.append(li);
    const children = el("ul");
    li.append(children);
    stack.push(children);
  }
  for (const ul of root.querySelectorAll("ul")) if (!ul.children.length) ul.remove();
  show(el("h1", {}, "Fork tree"), root);
}

// --- routing ----------------------------------------------------------------

async function route() {
  document.body.dataset.ready = "0";
  const hash = location.hash.slice(1) || "/";
  const [path, search] = hash.split("?", 2);
  const params = new URLSearchParams(search || "");
  try {
    if (path.startsWith("/s/")) await renderSession(decodeURIComponent(path.slice(3)));
    else if (path.startsWith("/tree/")) await renderTree(decodeURIComponent(path.slice(6)));
    else if (path === "/search") await renderSearch(params);
    else await renderList(params);
  } catch (e) {
    show(el("p", { class: "error", id: "error" }, e.message));
  }
  document.body.dataset.ready = "1";
}

document.getElementById("search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const q = document.getElementById("search-input").value.trim();
  if (q) location.hash = "#/search" + query({ q });
});
window.addEventListener("hashchange", route);
route();
