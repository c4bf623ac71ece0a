// Messages by stage (seed 004): counts by status and the success rate over
// the last N hours, for every stage in one stats request. The stages and the
// statuses (the columns, in lifecycle order) come from the API's vocabulary.

import * as api from "./api.js";
import { errText, fmtInt, fmtPct, h, num, setState } from "./dom.js";
import { go, val } from "./state.js";
import * as vocab from "./vocab.js";

const PREFIX = "s.";

export function filters(p) {
  return { hours: val(p, PREFIX + "hours", "24") };
}

export function init() {
  const form = document.getElementById("messages-form");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    go({ "s.hours": new FormData(form).get("hours") }, PREFIX);
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
  const f = filters(p);
  const form = document.getElementById("messages-form");
  form.hours.value = f.hours;
  const state = document.getElementById("messages-state");
  const body = document.querySelector("#messages-table tbody");
  setState(state, "loading", "Loading message counts…");
  let stats, stages, statuses;
  try {
    [stages, statuses] = await Promise.all([vocab.stages(), vocab.statuses("message")]);
    header(statuses);
    stats = byStage(await api.get("messages/stats", { hours: f.hours }), stages);
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
  if (total === 0) setState(state, "empty", `No messages in the last ${f.hours} hours.`);
  else setState(state, "ready", "");
}

// header puts a column per status between the table's first column (Stage)
// and its last two (total, success rate).
function header(statuses) {
  const row = document.querySelector("#messages-table thead tr");
  const cells = [...row.children];
  row.replaceChildren(cells[0], ...statuses.map((s) => h("th", { class: "num" }, s)), ...cells.slice(-2));
}
