// sf vs ldf: the daily metrics rows of both workflow types over a date
// range (one series request per workflow type, whatever the range's
// length), a chart of one figure, the compare table, and what is running or
// waiting for validation now.

import * as api from "./api.js";
import { barChart } from "./chart.js";
import { dateRange, errText, fmtDuration, fmtInt, fmtMoney, fmtPct, h, lastDays, num, setState } from "./dom.js";
import { go, val } from "./state.js";
import { observed } from "./vocab.js";

const PREFIX = "m.";
export const TYPES = [
  { key: "step-functions", short: "sf", label: "Step Functions (sf)" },
  { key: "durable-functions", short: "ldf", label: "Durable Functions (ldf)" },
];

// FIGURES are the figures of a metrics row the page shows, each with its
// value function and format.
export const FIGURES = {
  executionCount: { label: "executions", value: (m) => num(m.executionCount), format: fmtInt },
  successCount: { label: "succeeded", value: (m) => num(m.successCount), format: fmtInt },
  failureCount: { label: "failed", value: (m) => num(m.failureCount), format: fmtInt },
  successRate: { label: "success rate", value: successRate, format: fmtPct },
  avgDurationMs: { label: "average duration", value: (m) => num(m.avgDurationMs), format: (v) => fmtDuration(num(v) === null ? null : v / 1000) },
  avgCostPerExecution: { label: "average cost", value: (m) => num(m.avgCostPerExecution), format: (v) => fmtMoney(v, 4) },
  totalCost: { label: "total cost", value: (m) => num(m.totalCost), format: (v) => fmtMoney(v, 2) },
};

// successRate is the row's successRate when it has one, else succeeded /
// (succeeded + failed), as the API's compare response defines it: the share
// of finished executions that succeeded (null before any finished).
export function successRate(m) {
  if (m.successRate !== undefined) return num(m.successRate);
  const ok = num(m.successCount) || 0;
  const bad = num(m.failureCount) || 0;
  return ok + bad > 0 ? ok / (ok + bad) : null;
}

// filters returns the section's filters from the state, with defaults:
// days (lastDays: by default the last 7 days on the API's clock).
export function filters(p, days = lastDays("")) {
  return {
    from: val(p, PREFIX + "from", days.from),
    to: val(p, PREFIX + "to", days.to),
    metric: val(p, PREFIX + "metric", "executionCount"),
  };
}

export function init() {
  const form = document.getElementById("metrics-form");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const d = new FormData(form);
    go({ "m.from": d.get("from"), "m.to": d.get("to"), "m.metric": d.get("metric") }, PREFIX);
  });
}

// SERIES_PAGE is the page size of the series requests (the API's maximum).
const SERIES_PAGE = 200;

// series reads every daily metrics row of one workflow type from `from` to
// `to` (GET /api/metrics?workflowType=T&from=D&to=D, page after page) and
// returns them by date.
async function series(workflowType, from, to) {
  const byDate = {};
  const { items } = await api.all("metrics", { workflowType, from, to, limit: SERIES_PAGE }, Infinity);
  for (const row of items) if (row && row.date) byDate[row.date] = row;
  return byDate;
}

export async function load(p) {
  const data = await observed();
  const f = filters(p, lastDays(data && data.metrics ? data.metrics.newest : ""));
  const form = document.getElementById("metrics-form");
  form.from.value = f.from;
  form.to.value = f.to;
  form.metric.value = FIGURES[f.metric] ? f.metric : "executionCount";
  await Promise.all([loadNow(), loadDays(f)]);
}

async function loadDays(f) {
  const state = document.getElementById("metrics-state");
  const body = document.querySelector("#metrics-table tbody");
  const foot = document.querySelector("#metrics-table tfoot");
  const svg = document.getElementById("metrics-chart");
  const dates = dateRange(f.from, f.to);
  if (dates.length === 0) {
    body.replaceChildren();
    foot.replaceChildren();
    svg.replaceChildren();
    svg.classList.add("empty");
    setState(state, "error", "Choose a date range: From must be a date on or before To.");
    return;
  }
  setState(state, "loading", `Loading ${dates.length} days…`);
  let rows;
  try {
    const perType = await Promise.all(TYPES.map((t) => series(t.key, f.from, f.to)));
    rows = dates.map((date) => {
      const byType = {};
      TYPES.forEach((t, i) => {
        if (perType[i][date]) byType[t.key] = perType[i][date];
      });
      return { date, byType };
    });
  } catch (e) {
    body.replaceChildren();
    foot.replaceChildren();
    svg.replaceChildren();
    svg.classList.add("empty");
    setState(state, "error", errText(e));
    return;
  }
  body.replaceChildren(...rows.map((r) => tableRow(r.date, r.byType, "m-" + r.date)));
  const totals = {};
  for (const t of TYPES) {
    const sum = (k) => rows.reduce((acc, r) => acc + (num((r.byType[t.key] || {})[k]) || 0), 0);
    const ds = sum("durationSumMs");
    const dc = sum("durationCount");
    totals[t.key] = {
      executionCount: sum("executionCount"),
      successCount: sum("successCount"),
      failureCount: sum("failureCount"),
      totalCost: sum("totalCost"),
      avgDurationMs: dc > 0 ? Math.round(ds / dc) : null,
    };
    const ec = totals[t.key].executionCount;
    totals[t.key].avgCostPerExecution = ec > 0 ? totals[t.key].totalCost / ec : null;
  }
  foot.replaceChildren(tableRow("all days", totals, "m-total"));
  const fig = FIGURES[f.metric] || FIGURES.executionCount;
  svg.classList.remove("empty");
  barChart(svg, {
    categories: dates,
    series: TYPES.map((t) => ({ key: t.short, label: t.label, values: rows.map((r) => (r.byType[t.key] ? fig.value(r.byType[t.key]) : null)) })),
    format: fig.format,
    integer: fig.format === fmtInt,
    label: `${fig.label} per day, sf vs ldf`,
  });
  const any = rows.some((r) => Object.keys(r.byType).length > 0);
  if (!any) setState(state, "empty", "No sf or ldf executions in these days.");
  else setState(state, "ready", "");
}

// tableRow renders one date's sf and ldf figures side by side; each cell has
// data-testid "<prefix>-<sf|ldf>-<figure>" and the raw value.
function tableRow(label, byType, prefix) {
  const cells = [h("th", { scope: "row" }, label)];
  for (const fig of ["executionCount", "successCount", "failureCount", "successRate", "avgDurationMs", "avgCostPerExecution"]) {
    for (const t of TYPES) {
      const m = byType[t.key];
      const v = m ? FIGURES[fig].value(m) : null;
      cells.push(h("td", { class: "num", "data-testid": `${prefix}-${t.short}-${fig}`, "data-value": v === null ? "" : v }, FIGURES[fig].format(v)));
    }
  }
  return h("tr", { "data-testid": prefix === "m-total" ? "metrics-total" : "metrics-row", "data-key": label }, cells);
}

async function loadNow() {
  const state = document.getElementById("now-state");
  setState(state, "loading", "Counting running executions and pending tasks…");
  const jobs = [];
  for (const t of TYPES) {
    jobs.push(count("workflows/running", t.key, "running-" + t.key));
    jobs.push(count("workflows/tasks/pending", t.key, "pending-" + t.key));
  }
  const errs = (await Promise.allSettled(jobs)).filter((r) => r.status === "rejected").map((r) => r.reason);
  if (errs.length) setState(state, "error", errText(errs[0]));
  else setState(state, "ready", "");
}

async function count(path, workflowType, testid) {
  const el = document.querySelector(`[data-testid="${testid}"]`);
  el.textContent = "…";
  try {
    const { items, truncated } = await api.all(path, { workflowType }, 50);
    el.textContent = fmtInt(items.length) + (truncated ? "+" : "");
    el.dataset.value = String(items.length);
  } catch (e) {
    el.textContent = "–";
    el.dataset.value = "";
    throw e;
  }
}
