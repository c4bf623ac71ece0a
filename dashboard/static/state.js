// The page's state lives in the URL fragment (#e.agent=...&j.inst=...), so
// that a view can be bookmarked and reloaded and Next/Previous are links.
// The bearer token may arrive there too (#token=...): it is moved to
// sessionStorage and removed from the address bar at once.

import { setToken } from "./api.js";

// read returns the fragment's parameters, after taking the token out of it.
export function read() {
  const p = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (p.has("token")) {
    setToken(p.get("token"));
    p.delete("token");
    history.replaceState(null, "", location.pathname + location.search + (p.toString() ? "#" + p.toString() : ""));
  }
  return p;
}

// href returns the fragment link for the current state with changes
// applied: null or undefined removes a key, "" keeps it empty (an explicitly
// cleared filter, as opposed to an absent one that takes its default).
export function href(changes) {
  const p = new URLSearchParams(location.hash.replace(/^#/, ""));
  p.delete("token");
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === undefined) p.delete(k);
    else p.set(k, String(v));
  }
  p.sort();
  return "#" + p.toString();
}

// go navigates to the state with changes applied. When that changes
// nothing (a second "Show"), it asks for the section of prefix to be loaded
// again with an "sf:reload" event instead.
export function go(changes, prefix) {
  const next = href(changes);
  if (next === location.hash || (next === "#" && !location.hash)) {
    window.dispatchEvent(new CustomEvent("sf:reload", { detail: prefix }));
  } else {
    location.hash = next;
  }
}

// val returns the value of key in p, or def when the key is absent.
export function val(p, key, def = "") {
  return p.has(key) ? p.get(key) : def;
}

// sig is a section's part of the state as one string: a section reloads only
// when its part changed.
export function sig(p, prefix) {
  const parts = [];
  for (const [k, v] of p) if (k.startsWith(prefix)) parts.push(k + "=" + v);
  return parts.sort().join("&");
}

// Cursor stacks for Previous links: the cursors of the pages before the
// current one, joined with spaces ("-" for the first page, which has none).
export function pushCursor(stack, cursor) {
  return [...splitStack(stack), cursor || "-"].join(" ");
}

export function popCursor(stack) {
  const l = splitStack(stack);
  const prev = l.pop();
  return { cursor: prev === "-" ? "" : prev || "", stack: l.join(" ") };
}

export function splitStack(stack) {
  return (stack || "").split(" ").filter(Boolean);
}
