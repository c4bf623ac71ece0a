// DOM and formatting helpers shared by the dashboard's sections. Data is
// only ever put into the page as text (textContent, attributes), never as
// markup.

const SVG_NS = "http://www.w3.org/2000/svg";

// h builds an element: h("td", {class: "num", "data-testid": "x"}, "12").
// Attributes with null/undefined/false values are left out; children may be
// strings, numbers, nodes, arrays or null.
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s is h for SVG elements.
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// num converts an API number (a JSON number, or a numeric string) to a
// Number, or null when absent or not numeric.
export function num(v) {
  if (v === null || v === undefined || v === "") return null;
  const n = typeof v === "number" ? v : Number(v);
  return Number.isFinite(n) ? n : null;
}

// fmtInt renders an integer count as digits only (no grouping), so that a
// test can read it back exactly.
export function fmtInt(v) {
  const n = num(v);
  return n === null ? "–" : String(Math.round(n));
}

// fmtPct renders a ratio 0..1 as a percentage with one decimal.
export function fmtPct(ratio) {
  const n = num(ratio);
  return n === null ? "–" : (n * 100).toFixed(1) + "%";
}

// fmtMoney renders dollars.
export function fmtMoney(v, places = 4) {
  const n = num(v);
  return n === null ? "–" : "$" + n.toFixed(places);
}

// fmtDuration renders seconds as "1h 02m", "3m 07s", "42s" or "850 ms".
export function fmtDuration(seconds) {
  const n = num(seconds);
  if (n === null) return "–";
  if (n < 1 && n > 0) return Math.round(n * 1000) + " ms";
  let r = Math.round(n);
  const h = Math.floor(r / 3600);
  r -= h * 3600;
  const m = Math.floor(r / 60);
  const sec = r - m * 60;
  const p2 = (x) => String(x).padStart(2, "0");
  if (h > 0) return `${h}h ${p2(m)}m`;
  if (m > 0) return `${m}m ${p2(sec)}s`;
  return `${sec}s`;
}

// fmtTime renders an ISO 8601 time as "2026-01-05 12:34:56" (UTC).
export function fmtTime(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toISOString().slice(0, 19).replace("T", " ");
}

// The page's clock is the API's: every API response carries its clock in
// the X-Streamfold-Now header (api.js hands it to observeServerTime), and
// now() is the browser's clock corrected by the last offset seen, so that a
// browser whose clock is wrong still shows the API's "today" and true ages.
// Before the first response now() is the browser's clock.
let serverOffset = 0; // ms to add to Date.now()

// clockOffset returns the offset (ms) of the server's clock over the
// browser's, from the server's NowHeader value and the browser's clock when
// the request was sent and when its answer arrived (the server read its
// clock in between: the midpoint is the best guess). null when the header
// is missing or not a time.
export function clockOffset(header, sentAt, receivedAt) {
  const server = header ? Date.parse(header) : NaN;
  if (Number.isNaN(server)) return null;
  return Math.round(server - (sentAt + receivedAt) / 2);
}

// observeServerTime records the offset of one response's clock header.
export function observeServerTime(header, sentAt, receivedAt) {
  const off = clockOffset(header, sentAt, receivedAt);
  if (off !== null) serverOffset = off;
}

// now returns the current time in ms since the epoch on the API's clock.
export function now() {
  return Date.now() + serverOffset;
}

// today returns the current UTC date (on the API's clock) as YYYY-MM-DD,
// shifted by days.
export function today(days = 0) {
  const d = new Date(now() + days * 86400000);
  return d.toISOString().slice(0, 10);
}

// shiftDate returns the YYYY-MM-DD date days after date (before, when
// negative).
export function shiftDate(date, days) {
  return new Date(Date.parse(date + "T00:00:00Z") + days * 86400000).toISOString().slice(0, 10);
}

// lastDays is the default range of a section: the 7 days ending on the
// newest day of the data (a YYYY-MM-DD date or a time, from the API's
// observed spans), else the last 7 days on the API's clock.
export function lastDays(newest) {
  const day = typeof newest === "string" ? newest.slice(0, 10) : "";
  const to = isDate(day) ? day : today();
  return { from: shiftDate(to, -6), to };
}

// dateRange lists the UTC dates from..to inclusive (at most max of them,
// the latest ones).
export function dateRange(from, to, max = 62) {
  const out = [];
  const start = Date.parse(from + "T00:00:00Z");
  const end = Date.parse(to + "T00:00:00Z");
  if (Number.isNaN(start) || Number.isNaN(end) || end < start) return out;
  for (let t = end; t >= start && out.length < max; t -= 86400000) {
    out.unshift(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

// isDate reports whether v is a YYYY-MM-DD date.
export function isDate(v) {
  return typeof v === "string" && /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v + "T00:00:00Z"));
}

// errText is the text a section shows for a failed request: an APIError's
// text(), else the error as a string.
export function errText(e) {
  return e && e.text ? e.text() : String(e);
}

// setState marks a section's status line: loading, ready, empty or error.
// The element carries data-state for tests and the message as its text.
export function setState(el, state, message) {
  el.dataset.state = state;
  el.className = "state state-" + state;
  el.textContent = message || "";
  el.hidden = !message;
}
