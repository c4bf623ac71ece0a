// The dashboard's entry point: the token, the pages and their sections, and
// reloading a section when its part of the URL fragment changes. Two pages
// share the document: the data page (the four projection sections, the
// default) and the operations page (#page=ops); only the current page's
// sections are shown and loaded. When every section of the page has
// finished loading (with data, empty or an error), the header's
// data-testid="app-state" element reads "ready".

import * as api from "./api.js";
import { now } from "./dom.js";
import * as executions from "./executions.js";
import * as jobs from "./jobs.js";
import * as messages from "./messages.js";
import * as metrics from "./metrics.js";
import * as operations from "./operations.js";
import { href, read, sig } from "./state.js";
import { vocabulary } from "./vocab.js";

const SECTIONS = [
  { prefix: "e.", mod: executions, page: "data" },
  { prefix: "m.", mod: metrics, page: "data" },
  { prefix: "j.", mod: jobs, page: "data" },
  { prefix: "s.", mod: messages, page: "data" },
  { prefix: "o.", mod: operations, page: "ops" },
];

// page is the fragment's page: "ops" or "data" (anything else).
function page(p) {
  return p.get("page") === "ops" ? "ops" : "data";
}

// showPage shows the sections of one page (a section's data-page, "data"
// when it has none) and marks its navigation links.
function showPage(name) {
  for (const sec of document.querySelectorAll("main > section")) sec.hidden = (sec.dataset.page || "data") !== name;
  for (const a of document.querySelectorAll(".top nav a")) a.classList.toggle("active", (a.dataset.pageLink || "data") === name && name === "ops");
}

const loaded = new Map(); // prefix -> signature of the state last loaded

function appState(state, text) {
  const el = document.querySelector('[data-testid="app-state"]');
  el.dataset.state = state;
  el.textContent = text;
}

function showTokenForm(message) {
  document.getElementById("main").hidden = true;
  document.getElementById("signout").hidden = true;
  const form = document.getElementById("token-form");
  form.hidden = false;
  const err = document.getElementById("token-error");
  err.textContent = message || "";
  err.hidden = !message;
  appState("token", "token needed");
  form.token.focus();
}

// refresh loads the sections whose part of the state changed (all of them
// with force, or only the one whose prefix force names). Refreshes run one
// after the other, so an older answer never overwrites a newer one.
let queue = Promise.resolve();
function refresh(force) {
  queue = queue.then(() => doRefresh(force)).catch((e) => console.error(e));
  return queue;
}

async function doRefresh(force) {
  const p = read();
  if (!api.token()) {
    showTokenForm("");
    return;
  }
  document.getElementById("token-form").hidden = true;
  document.getElementById("main").hidden = false;
  document.getElementById("signout").hidden = false;
  const current = page(p);
  showPage(current);
  appState("loading", "loading…");
  // The sections' defaults ("the last 7 days") are days on the API's clock,
  // which the first response brings: wait for one (the vocabulary, which
  // the sections need anyway and fetch once). Its failure is the sections'
  // to report; a refused token brings up the form.
  await vocabulary().catch(() => {});
  if (!api.token()) return;
  const work = [];
  for (const sec of SECTIONS) {
    if (sec.page !== current) continue;
    const key = sig(p, sec.prefix);
    if (force !== true && force !== sec.prefix && loaded.get(sec.prefix) === key) continue;
    loaded.set(sec.prefix, key);
    work.push(sec.mod.load(p));
  }
  const results = await Promise.allSettled(work);
  if (!api.token()) return; // the token was refused meanwhile: the form is up
  const failed = results.filter((r) => r.status === "rejected");
  for (const r of failed) console.error(r.reason);
  if (failed.length) appState("error", "a section failed to render");
  else appState("ready", "up to date " + new Date(now()).toISOString().slice(11, 19) + " UTC");
}

function start() {
  for (const sec of SECTIONS) sec.mod.init();
  document.getElementById("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const t = new FormData(ev.target).get("token").trim();
    if (!t) return;
    api.setToken(t);
    ev.target.reset();
    refresh(true);
  });
  document.getElementById("signout").addEventListener("click", () => {
    api.setToken("");
    loaded.clear();
    showTokenForm("");
  });
  api.onUnauthorized((e) => {
    api.setToken("");
    loaded.clear();
    showTokenForm("The API refused the token: " + e.text());
  });
  // The section links scroll (to the data page first, from the operations
  // page); they must not replace the fragment's state. The operations link
  // switches page, keeping the rest of the state.
  for (const a of document.querySelectorAll("[data-nav]")) {
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      const el = document.getElementById(a.dataset.nav + "-section");
      if (page(read()) === "data") {
        el.scrollIntoView({ behavior: "smooth" });
        return;
      }
      location.hash = href({ page: null });
      refresh(false).then(() => el.scrollIntoView());
    });
  }
  for (const a of document.querySelectorAll("[data-page-link]")) {
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      location.hash = href({ page: a.dataset.pageLink });
      window.scrollTo(0, 0);
    });
  }
  window.addEventListener("hashchange", () => refresh(false));
  window.addEventListener("sf:reload", (ev) => refresh(ev.detail));
  refresh(true);
}

start();
