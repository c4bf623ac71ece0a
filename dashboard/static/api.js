// The dashboard's client of streamfold's HTTP JSON API. Every request
// carries the bearer token; every failure becomes an APIError whose message
// is the API's own ({"error":{"code","message","param"}}) when it sent one.
// Every response's clock header (X-Streamfold-Now) sets the page's clock
// (dom.js now()).

import { observeServerTime } from "./dom.js";

const TOKEN_KEY = "streamfold.token";
const NOW_HEADER = "X-Streamfold-Now"; // api.NowHeader

export class APIError extends Error {
  constructor(status, code, message, param) {
    super(message);
    this.name = "APIError";
    this.status = status; // HTTP status, 0 for a network failure
    this.code = code || "";
    this.param = param || "";
  }
  // text is what the page shows: the message, with the parameter it names
  // unless the message starts with it already.
  text() {
    const where = this.param && !this.message.startsWith(this.param + ":") ? ` (${this.param})` : "";
    const status = this.status ? `HTTP ${this.status}: ` : "";
    return `${status}${this.message}${where}`;
  }
}

export function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  } catch {
    return memoryToken;
  }
}

let memoryToken = "";

export function setToken(t) {
  memoryToken = t || "";
  try {
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // sessionStorage unavailable (e.g. disabled storage): keep it in memory.
  }
}

// listeners for a 401: the page asks for a token again.
const unauthorized = [];
export function onUnauthorized(fn) {
  unauthorized.push(fn);
}

// url builds "api/<path>?<params>" relative to the page, leaving out empty
// parameters. Path segments given as an array are escaped one by one.
export function url(path, params) {
  const p = Array.isArray(path) ? path.map((x) => encodeURIComponent(String(x))).join("/") : path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== null && v !== undefined && v !== "") q.set(k, String(v));
  }
  const qs = q.toString();
  return "api/" + p + (qs ? "?" + qs : "");
}

// get fetches one API resource and returns its JSON body.
export async function get(path, params) {
  let res;
  const sentAt = Date.now();
  try {
    res = await fetch(url(path, params), {
      headers: { Authorization: "Bearer " + token(), Accept: "application/json" },
      cache: "no-store",
    });
  } catch (e) {
    throw new APIError(0, "network", `cannot reach the API: ${e.message}`);
  }
  observeServerTime(res.headers.get(NOW_HEADER), sentAt, Date.now());
  let body = null;
  const text = await res.text();
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
  }
  if (!res.ok) {
    const err = body && body.error ? body.error : {};
    const e = new APIError(res.status, err.code, err.message || text.trim() || res.statusText || "request failed", err.param);
    if (res.status === 401) unauthorized.forEach((fn) => fn(e));
    throw e;
  }
  if (body === null) throw new APIError(res.status, "decode", "the API answered with no JSON body");
  return body;
}

// all follows "next" cursors and returns every item of a list, at most
// maxPages pages; truncated is true when more pages were left.
export async function all(path, params, maxPages = 20) {
  const items = [];
  let cursor = "";
  for (let i = 0; i < maxPages; i++) {
    const page = await get(path, { ...params, cursor });
    items.push(...(page.items || []));
    cursor = page.next || "";
    if (!cursor) return { items, truncated: false };
  }
  return { items, truncated: true };
}
