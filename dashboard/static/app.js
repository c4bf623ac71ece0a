// The dashboard's entry point: the token, the sections, and reloading a
// section when its part of the URL fragment changes. When every section has
// finished loading (with data, empty or an error), the header's
// data-testid="app-state" element reads "ready".

import * as api from "./api.js";
import { now } from "./dom.js";
import * as executions from "./executions.js";
import * as jobs from "./jobs.js";
import * as messages from "./messages.js";
import * as metrics from "./metrics.js";
import { read, sig } from "./state.js";
import { vocabulary } from "./vocab.js";

const SECTIONS = [
  { prefix: "e.", mod: executions },
  { prefix: "m.", mod: metrics },
  { prefix: "j.", mod: jobs },
  { prefix: "s.", mod: messages },
];

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
  appState("loading", "loading…");
  // The sections' defaults ("the last 7 days") are days on the API's clock,
  // which the first response brings: wait for one (the vocabulary, which
  // the sections need anyway and fetch once). Its failure is the sections'
  // to report; a refused token brings up the form.
  await vocabulary().catch(() => {});
  if (!api.token()) return;
  const work = [];
  for (const sec of SECTIONS) {
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
  // The section links scroll; they must not replace the fragment's state.
  for (const a of document.querySelectorAll("[data-nav]")) {
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      document.getElementById(a.dataset.nav + "-section").scrollIntoView({ behavior: "smooth" });
    });
  }
  window.addEventListener("hashchange", () => refresh(false));
  window.addEventListener("sf:reload", (ev) => refresh(ev.detail));
  refresh(true);
}

start();
