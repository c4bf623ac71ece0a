// Agent execution history (seed 002's History page): filter by agent or
// status and a date range, one page of executions, Next/Previous by cursor.
// Without an agent or a status it lists every agent's executions, newest
// first, over the 7 days ending on the newest execution's day: the first
// load shows data without anything typed.

import * as api from "./api.js";
import { errText, fmtDuration, fmtInt, fmtTime, h, lastDays, num, setState } from "./dom.js";
import { hidePager, setPager } from "./pager.js";
import { go, val } from "./state.js";
import { fillStatuses, observed } from "./vocab.js";

const PREFIX = "e.";
const PAGER = { prev: "exec-prev", next: "exec-next", page: "exec-page" };
const knownAgents = new Set();

// filters returns the section's filters from the state, with defaults:
// days (lastDays: by default the last 7 days on the API's clock), 25 per
// page.
export function filters(p, days = lastDays("")) {
  return {
    agent: val(p, PREFIX + "agent"),
    status: val(p, PREFIX + "status"),
    from: val(p, PREFIX + "from", days.from),
    to: val(p, PREFIX + "to", days.to),
    limit: val(p, PREFIX + "limit", "25"),
    cursor: val(p, PREFIX + "cursor"),
  };
}

// params turns the filters into the API's query parameters: dates become
// the first and last instant of those UTC days.
export function params(f) {
  return {
    agent: f.agent,
    status: f.status,
    from: f.from ? f.from + "T00:00:00Z" : "",
    to: f.to ? f.to + "T23:59:59.999Z" : "",
    limit: f.limit,
    cursor: f.cursor,
  };
}

export function init() {
  const form = document.getElementById("exec-form");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const d = new FormData(form);
    go({
      "e.agent": d.get("agent").trim(),
      "e.status": d.get("status"),
      "e.from": d.get("from"),
      "e.to": d.get("to"),
      "e.limit": d.get("limit"),
      "e.cursor": null,
      "e.prev": null,
    }, PREFIX);
  });
}

export async function load(p) {
  const data = await observed();
  const f = filters(p, lastDays(data && data.executions ? data.executions.newest : ""));
  const form = document.getElementById("exec-form");
  await fillStatuses(form.status, "agent-execution", "");
  form.agent.value = f.agent;
  form.status.value = f.status;
  form.from.value = f.from;
  form.to.value = f.to;
  form.limit.value = f.limit;
  const state = document.getElementById("exec-state");
  const body = document.querySelector("#exec-table tbody");
  const count = document.getElementById("exec-count");
  hidePager(PAGER);
  document.getElementById("exec-page").textContent = "1";
  setState(state, "loading", "Loading executions…");
  let page;
  try {
    page = await api.get("executions", params(f));
  } catch (e) {
    body.replaceChildren();
    count.textContent = "0";
    setState(state, "error", errText(e));
    return;
  }
  const items = page.items || [];
  body.replaceChildren(...items.map(row));
  count.textContent = fmtInt(items.length);
  count.dataset.value = String(items.length);
  for (const it of items) if (it.agentName) knownAgents.add(it.agentName);
  document.getElementById("agent-names").replaceChildren(...[...knownAgents].sort().map((a) => h("option", { value: a })));
  setPager(p, PREFIX, PAGER, page.next || "");
  if (items.length === 0) setState(state, "empty", f.agent || f.status ? "No executions match these filters." : "No executions of any agent in these days.");
  else setState(state, "ready", "");
}

function row(it) {
  const dur = num(it.durationSeconds);
  return h(
    "tr",
    { "data-testid": "exec-row", "data-key": it.executionArn, "data-status": it.status },
    h("td", {}, it.agentName || "–"),
    h("td", { title: it.executionArn, class: "mono" }, it.executionName || it.executionArn),
    h("td", {}, h("span", { class: "badge badge-" + String(it.status || "").toLowerCase() }, it.status || "–")),
    h("td", {}, fmtTime(it.startDate)),
    h("td", {}, fmtTime(it.stopDate)),
    h("td", { class: "num", "data-testid": "exec-duration", "data-value": dur === null ? "" : dur }, dur === null ? (it.status === "RUNNING" ? "running" : "–") : fmtDuration(dur)),
  );
}
