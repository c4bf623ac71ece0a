// Messages by stage (seed 004): counts by status and the success rate over
// the N hours up to a time (now by default), for every stage in one stats
// request. The stages and the statuses (the columns, in lifecycle order)
// come from the API's vocabulary. Without a window in the state, the window
// covers the messages the data holds (the API's observed span): it ends at
// the newest message and spans back to the oldest, 24 to 720 hours.

import * as api from "./api.js";
import { errText, fmtInt, fmtPct, h, num, setState } from "./dom.js";
import { go, val } from "./state.js";
import * as vocab from "./vocab.js";

const PREFIX = "s.";

// MIN_HOURS and MAX_HOURS bound the default window (the form's bounds).
const MIN_HOURS = 24;
const MAX_HOURS = 720;

// dataWindow is the default window over a span of created_date times
// ({oldest, newest}, the API's observed messages): it ends at the newest
// and covers the oldest, in whole hours from 24 to 720; the last 24 hours
// before now without a span.
export function dataWindow(span) {
  const newest = span ? Date.parse(span.newest) : NaN;
  const oldest = span ? Date.parse(span.oldest) : NaN;
  if (Number.isNaN(newest) || Number.isNaN(oldest)) return { hours: String(MIN_HOURS), to: "" };
  const hours = Math.min(MAX_HOURS, Math.max(MIN_HOURS, Math.ceil((newest - oldest) / 3600000)));
  return { hours: String(hours), to: span.newest };
}

// filters returns the section's filters from the state: hours and to (""
// is now). With neither in the state, the window is def (dataWindow); with
// hours alone, it ends now.
export function filters(p, def = dataWindow(null)) {
  if (!p.has(PREFIX + "hours") && !p.has(PREFIX + "to")) return { ...def };
  return { hours: val(p, PREFIX + "hours", def.hours), to: val(p, PREFIX + "to") };
}

export function init() {
  const form = document.getElementById("messages-form");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const d = new FormData(form);
    go({ "s.hours": d.get("hours"), "s.to": d.get("to").trim() }, PREFIX);
  });
}

// byStage returns the stats of each of stages from a stats response
// ({"stages":[{stage, counts, total, successRate}, ...]}); a stage the
// response lacks counts as empty.
export function byStage(resp, stages) {
  const found = new Map(((resp && resp.stages) || []).map((st) => [st.stage, st]));
  return stages.map((stage) => found.get(stage) || { stage, counts: {}, total: 0, successRate: null });
}

// counts reads one stage of a stats response (the API's StageStats): counts
// by each of statuses, the total and the success rate.
export function counts(st, statuses) {
  const src = (st && st.counts) || {};
  const out = {};
  for (const s of statuses) out[s] = num(src[s]) || 0;
  const total = num(st && st.total) ?? statuses.reduce((a, s) => a + out[s], 0);
  let rate = num(st && st.successRate);
  if (rate === null) rate = out.completed + out.failed > 0 ? out.completed / (out.completed + out.failed) : null;
  return { byStatus: out, total, rate };
}

export async function load(p) {
  const data = await vocab.observed();
  const f = filters(p, dataWindow(data && data.messages));
  const form = document.getElementById("messages-form");
  form.hours.value = f.hours;
  form.to.value = f.to;
  const state = document.getElementById("messages-state");
  const body = document.querySelector("#messages-table tbody");
  setState(state, "loading", "Loading message counts…");
  let stats, stages, statuses;
  try {
    [stages, statuses] = await Promise.all([vocab.stages(), vocab.statuses("message")]);
    header(statuses);
    stats = byStage(await api.get("messages/stats", { hours: f.hours, to: f.to }), stages);
  } catch (e) {
    body.replaceChildren();
    setState(state, "error", errText(e));
    return;
  }
  const rows = stats.map((st, i) => {
    const c = counts(st, statuses);
    const stage = stages[i];
    return h(
      "tr",
      { "data-testid": "messages-row", "data-key": stage },
      h("th", { scope: "row" }, stage),
      statuses.map((s) => h("td", { class: "num status-" + s, "data-testid": `msg-${stage}-${s}`, "data-value": c.byStatus[s] }, fmtInt(c.byStatus[s]))),
      h("td", { class: "num", "data-testid": `msg-${stage}-total`, "data-value": c.total }, fmtInt(c.total)),
      h("td", { class: "num", "data-testid": `msg-${stage}-rate`, "data-value": c.rate === null ? "" : c.rate }, fmtPct(c.rate)),
    );
  });
  body.replaceChildren(...rows);
  const total = stats.reduce((a, st) => a + counts(st, statuses).total, 0);
  if (total === 0) setState(state, "empty", `No messages in the ${f.hours} hours up to ${f.to || "now"}.`);
  else setState(state, "ready", "");
}

// header puts a column per status between the table's first column (Stage)
// and its last two (total, success rate).
function header(statuses) {
  const row = document.querySelector("#messages-table thead tr");
  const cells = [...row.children];
  row.replaceChildren(cells[0], ...statuses.map((s) => h("th", { class: "num" }, s)), ...cells.slice(-2));
}
