// The console's helpers: calls to the server's own JSON API (never elsewhere), the token
// kept in sessionStorage, and small DOM and SVG builders shared by the pages.
"use strict";

const Api = (() => {
  const TOKEN_KEY = "skills-console-token";

  function token() {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  }

  function setToken(value) {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  }

  // One call to `/v1`; the answer's JSON, or an Error with the API's code and message.
  async function call(path, method, body) {
    const headers = { Accept: "application/json" };
    const t = token();
    if (t) headers.Authorization = "Bearer " + t;
    const init = { method, headers, cache: "no-store", credentials: "same-origin" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const resp = await fetch(path, init);
    const text = await resp.text();
    let data = null;
    try { data = JSON.parse(text); } catch (_) { data = null; }
    if (!resp.ok) {
      const e = data && data.error;
      const err = new Error(e ? `${e.code}: ${e.message}` : `HTTP ${resp.status}`);
      err.code = e ? e.code : String(resp.status);
      err.status = resp.status;
      throw err;
    }
    return data;
  }

  // A query string from an object, leaving out empty values.
  function query(params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
    }
    const s = q.toString();
    return s ? "?" + s : "";
  }

  return {
    token,
    setToken,
    query,
    get: (path) => call(path, "GET"),
    post: (path, body) => call(path, "POST", body),
  };
})();

// `h("p", {class: "x"}, "text", child)`: an element with attributes and children. Text is
// always set as text, never parsed as HTML.
function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

function s(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  append(node, children);
  return node;
}

// A horizontal bar for `value` out of `max`, with the number written beside it so it reads
// without colour; `label` names it for screen readers.
function bar(value, max, label, cls) {
  const width = 120;
  const frac = max > 0 ? Math.max(0, Math.min(1, value / max)) : 0;
  return s("svg", { width: width + 2, height: 12, role: "img", "aria-label": label, class: "barchart" },
    s("title", {}, label),
    s("rect", { class: "track", x: 0.5, y: 0.5, width: width, height: 11 }),
    s("rect", { class: cls || "bar", x: 1, y: 1, width: Math.round(frac * (width - 1)), height: 10 }));
}

// A table: `columns` are header texts, `rows` arrays of cells (text or nodes).
function table(columns, rows, attrs) {
  return h("table", attrs || {},
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, r.map((cell, i) =>
      i === 0 ? h("th", { scope: "row" }, cell) : h("td", {}, cell))))));
}

function fmt(n, digits) {
  return typeof n === "number" ? n.toFixed(digits) : "–";
}

// The hash route's parameters (`#/page?a=b`).
function hashParams() {
  const i = location.hash.indexOf("?");
  return new URLSearchParams(i >= 0 ? location.hash.slice(i + 1) : "");
}

function errorBox(err) {
  return h("p", { class: "error", role: "alert" }, String(err && err.message ? err.message : err));
}
