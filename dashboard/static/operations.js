// The operations page (#page=ops): each stream consumer's lag and recent
// throughput from its heartbeats, stale heartbeats marked; the last
// reconcile's result by domain and day; the gaps the consumers noticed in
// the last 7 days; the dead letters (default: every consumer, the last 7
// days on the API's clock) with the command that replays each. Everything
// comes from GET /api/operations and GET /api/operations/deadletters; the
// first load needs no input.

import * as api from "./api.js";
import { errText, fmtDuration, fmtInt, fmtTime, h, num, setState } from "./dom.js";
import { go, val } from "./state.js";

const PREFIX = "o.";

// Consumers always offered by the dead-letter filter (the API lists the
// others it knows in its answer).
const KNOWN = ["projector", "archiver", "ingest"];

export function filters(p) {
  return {
    consumer: val(p, PREFIX + "consumer"),
    status: val(p, PREFIX + "status", "all"),
    since: val(p, PREFIX + "since"),
  };
}

export function init() {
  const form = document.getElementById("dl-form");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const d = new FormData(form);
    go({ "o.consumer": d.get("consumer") || null, "o.status": d.get("status") === "all" ? null : d.get("status"), "o.since": d.get("since") || null }, PREFIX);
  });
}

// dlParams are the API parameters of the dead-letter list; absent ones
// take the API's defaults (every consumer, the last 7 days, any status).
export function dlParams(f) {
  return { consumer: f.consumer, status: f.status === "all" ? "" : f.status, since: f.since ? f.since + "T00:00:00Z" : "" };
}

export async function load(p) {
  const f = filters(p);
  const [ov, dl] = await Promise.allSettled([api.get("operations"), api.get("operations/deadletters", dlParams(f))]);
  const state = document.getElementById("ops-state");
  if (ov.status === "rejected") {
    setState(state, "error", errText(ov.reason));
    consumers(null);
    reconcile(null);
    gaps(null);
  } else {
    setState(state, "ready", "");
    const o = ov.value;
    const nowEl = document.querySelector('[data-testid="ops-now"]');
    nowEl.dataset.value = o.now;
    nowEl.textContent = fmtTime(o.now) + " UTC";
    document.getElementById("ops-stale-after").textContent = fmtDuration(o.staleAfterSeconds);
    consumers(o);
    reconcile(o.lastReconcile);
    gaps(o);
  }
  deadLetters(f, dl, ov.status === "fulfilled" ? ov.value : null);
}

// cell builds an element with data-testid id carrying its raw value in
// data-value (empty for none) and its text.
function cell(tag, id, value, text, attrs) {
  return h(tag, { ...(attrs || {}), "data-testid": id, "data-value": value === null || value === undefined ? "" : value }, text);
}

function fmtRate(v) {
  const n = num(v);
  return n === null ? "–" : n.toFixed(n >= 100 ? 0 : 1) + "/s";
}

function consumers(o) {
  const body = document.querySelector("#ops-consumers tbody");
  const state = document.getElementById("ops-consumers-state");
  if (!o) {
    body.replaceChildren();
    state.hidden = true;
    return;
  }
  const rows = [];
  for (const c of o.consumers || []) {
    const stale = c.state !== "ok";
    rows.push(
      h(
        "tr",
        { "data-testid": "ops-consumer-row", "data-key": c.consumer, "data-state": c.state, class: stale ? "stale" : null },
        h("th", { scope: "row" }, c.consumer),
        h("td", {}, h("span", { class: "badge badge-" + c.state, "data-testid": `ops-state-${c.consumer}` }, c.state === "none" ? "no heartbeat" : c.state)),
        cell("td", `ops-heartbeat-${c.consumer}`, c.lastHeartbeat, c.lastHeartbeat ? fmtTime(c.lastHeartbeat) : "never"),
        cell("td", `ops-age-${c.consumer}`, c.heartbeatAgeSeconds, c.heartbeatAgeSeconds === null ? "–" : fmtDuration(c.heartbeatAgeSeconds) + " ago", { class: "num" }),
        cell("td", `ops-lag-${c.consumer}`, c.state === "none" ? null : c.lagSeconds, c.state === "none" ? "–" : fmtDuration(c.lagSeconds), { class: "num" }),
        cell("td", `ops-rate-${c.consumer}`, c.state === "none" ? null : c.recordsPerSecond, c.state === "none" ? "–" : fmtRate(c.recordsPerSecond), { class: "num" }),
        h(
          "td",
          { class: "num" },
          cell("span", `ops-shards-${c.consumer}`, c.currentShards, fmtInt(c.currentShards)),
          c.shards.length > c.currentShards ? ` (+${c.shards.length - c.currentShards} idle)` : "",
        ),
        h("td", {}, c.lastRecord ? fmtTime(c.lastRecord) : "–"),
      ),
    );
    for (const s of c.shards || []) {
      rows.push(
        h(
          "tr",
          { "data-testid": "ops-shard-row", "data-key": c.consumer + "/" + s.shard, "data-current": String(s.current), class: "shard" + (s.current ? "" : " idle") },
          h("td", { class: "mono indent", title: s.lastSeq ? "last sequence number " + s.lastSeq : null }, s.shard),
          h("td", {}, s.current ? "current" : "closed or idle"),
          h("td", {}, fmtTime(s.updated)),
          h("td", { class: "num" }, fmtDuration(s.ageSeconds) + " ago"),
          h("td", { class: "num" }, fmtDuration(s.lagSeconds)),
          h("td", { class: "num" }, fmtRate(s.recordsPerSecond)),
          h("td", { class: "num" }, fmtInt(s.records) + " rec"),
          h("td", {}, s.lastRecord ? fmtTime(s.lastRecord) : "–"),
        ),
      );
    }
  }
  body.replaceChildren(...rows);
  const stale = (o.consumers || []).filter((c) => c.state !== "ok").map((c) => c.consumer);
  if (stale.length) {
    setState(state, "warn", `No recent heartbeat from ${stale.join(", ")}: stopped, or (a Lambda consumer beats only when it handles a batch) no records since.`);
  } else {
    setState(state, "ready", "");
  }
}

const ROW_FIGURES = [
  ["events", "events"],
  ["missingProjection", "missing projection"],
  ["missingArchive", "missing archive"],
  ["conflicts", "conflicts"],
  ["deadLettered", "dead-lettered"],
  ["late", "late"],
  ["archiveOnly", "archive only"],
  ["healed", "healed"],
];

function reconcile(r) {
  const state = document.getElementById("rc-state");
  const cards = document.getElementById("rc-cards");
  const body = document.querySelector("#rc-table tbody");
  const table = document.getElementById("rc-table");
  if (!r) {
    cards.replaceChildren();
    body.replaceChildren();
    table.hidden = true;
    setState(state, "empty", "Reconcile has not run yet (streamfold reconcile --since 24h, or the scheduled function).");
    return;
  }
  const stat = (label, id, value, text, cls) => h("div", { class: "stat" + (cls ? " " + cls : "") }, h("span", { class: "label" }, label), cell("span", id, value, text, { class: "value" }));
  cards.replaceChildren(
    stat("Finished (UTC)", "rc-finished", r.finished, fmtTime(r.finished)),
    stat("Age", "rc-age", r.ageSeconds, fmtDuration(r.ageSeconds)),
    stat("Window (UTC)", "rc-window", r.from + "/" + r.to, fmtTime(r.from).slice(0, 16) + " → " + fmtTime(r.to).slice(0, 16)),
    stat("Events checked", "rc-events", r.events, fmtInt(r.events)),
    stat("Gaps", "rc-gaps", r.totalGaps, fmtInt(r.totalGaps), r.totalGaps > 0 ? "bad" : "good"),
    stat(r.heal ? "Healed (--heal)" : "Healed (report only)", "rc-healed", r.totalHealed, fmtInt(r.totalHealed), r.heal ? "" : "muted"),
  );
  const rows = (r.rows || []).map((d) =>
    h(
      "tr",
      { "data-testid": "rc-row", "data-key": d.domain + "/" + d.day, class: d.missingProjection + d.missingArchive + d.conflicts > (d.healed || 0) ? "gap" : null },
      h("th", { scope: "row" }, d.domain),
      h("td", {}, d.day),
      ROW_FIGURES.map(([k]) => cell("td", `rc-${d.domain}-${d.day}-${k}`, d[k] || 0, fmtInt(d[k] || 0), { class: "num" })),
      h("td", { class: "wrap mono" }, idList(d.ids)),
    ),
  );
  body.replaceChildren(...rows);
  table.hidden = rows.length === 0;
  if (r.error) setState(state, "error", "The run failed (its rows are partial): " + r.error);
  else if (!rows.length) setState(state, "ready", `Clean: every event of the window was projected and archived.`);
  else setState(state, "ready", "");
}

// idList renders a row's event ids per kind ({"projection":[...], ...}).
function idList(ids) {
  const parts = [];
  for (const [kind, list] of Object.entries(ids || {})) {
    if (!list || !list.length) continue;
    parts.push(kind + ": " + list.slice(0, 3).join(", ") + (list.length > 3 ? ` (+${list.length - 3})` : ""));
  }
  return parts.length ? parts.join("; ") : "–";
}

function gaps(o) {
  const state = document.getElementById("gaps-state");
  const body = document.querySelector("#gaps-table tbody");
  const countEl = document.querySelector('[data-testid="gaps-count"]');
  if (!o) {
    body.replaceChildren();
    countEl.dataset.value = "";
    countEl.textContent = "–";
    return;
  }
  const list = o.gaps || [];
  countEl.dataset.value = list.length;
  countEl.textContent = String(list.length) + (o.gapsTruncated ? "+" : "");
  body.replaceChildren(
    ...list.map((g) =>
      h(
        "tr",
        { "data-testid": "gap-row", "data-key": g.noticed + "#" + g.consumer + "#" + (g.shard || ""), "data-kind": g.kind },
        h("td", {}, fmtTime(g.noticed)),
        h("td", {}, g.consumer),
        h("td", {}, h("span", { class: "badge badge-gap" }, g.kind)),
        h("td", { class: "mono" }, g.shard || "–"),
        h("td", { class: "num" }, g.records ? fmtInt(g.records) : "–"),
        h("td", {}, g.from || g.to ? fmtTime(g.from) + " → " + fmtTime(g.to) : "unknown (reconcile checks the whole window)"),
        h("td", { class: "wrap" }, g.detail || ""),
      ),
    ),
  );
  if (!list.length) setState(state, "empty", "No gaps noticed in the last 7 days.");
  else setState(state, "ready", "");
}

function deadLetters(f, res, overview) {
  const form = document.getElementById("dl-form");
  const state = document.getElementById("dl-state");
  const body = document.querySelector("#dl-table tbody");
  const counts = document.getElementById("dl-counts");
  const names = new Set(KNOWN);
  for (const c of (overview && overview.consumers) || []) names.add(c.consumer);
  if (res.status === "fulfilled") for (const c of res.value.consumers || []) names.add(c.consumer);
  if (f.consumer) names.add(f.consumer);
  form.consumer.replaceChildren(h("option", { value: "" }, "all consumers"), ...[...names].map((n) => h("option", { value: n }, n)));
  form.consumer.value = f.consumer;
  form.status.value = f.status;
  if (res.status === "rejected") {
    body.replaceChildren();
    counts.replaceChildren();
    setState(state, "error", errText(res.reason));
    return;
  }
  const l = res.value;
  form.since.value = f.since || (l.since || "").slice(0, 10);
  counts.replaceChildren(
    ...(l.consumers || []).map((c) =>
      h(
        "div",
        { class: "stat" + (c.quarantined > 0 ? " warn" : "") },
        h("span", { class: "label" }, c.consumer + " · quarantined"),
        cell("span", `dl-count-${c.consumer}`, c.quarantined, fmtInt(c.quarantined), { class: "value" }),
        h("span", { class: "label" }, fmtInt(c.replayed) + " replayed"),
      ),
    ),
  );
  for (const [id, v] of [["dl-shown", l.items.length], ["dl-total", l.total]]) {
    const el = document.querySelector(`[data-testid="${id}"]`);
    el.dataset.value = v;
    el.textContent = fmtInt(v);
  }
  document.getElementById("dl-since").textContent = fmtTime(l.since) + " UTC";
  // Each letter is two rows: what it is, then the command that replays it
  // (or why it is not replayed) across the table's width.
  body.replaceChildren(
    ...l.items.flatMap((d) => [
      h(
        "tr",
        { "data-testid": "dl-row", "data-key": d.consumer + "/" + d.position, "data-status": d.status, class: "letter" },
        h("td", {}, fmtTime(d.quarantinedAt)),
        h("td", {}, d.consumer),
        h("td", {}, h("span", { class: "badge" }, d.reason)),
        cell("td", "dl-subject", d.subject, d.subject || "–", { class: "mono" }),
        h("td", { class: "mono", title: d.position }, (d.eventName ? d.eventName + " · " : "") + (d.eventId || "–")),
        h("td", {}, h("span", { class: "badge badge-" + d.status }, d.status)),
        h("td", { class: "wrap err", title: d.error }, d.error.length > 240 ? d.error.slice(0, 240) + "…" : d.error),
      ),
      h(
        "tr",
        { class: "replay" },
        h(
          "td",
          { colspan: 7 },
          d.replay
            ? [h("span", { class: "label" }, "replay: "), h("code", { class: "cmd", "data-testid": "dl-replay" }, d.replay)]
            : h("span", { class: "muted", "data-testid": "dl-replay-note" }, d.replayNote || ""),
        ),
      ),
    ]),
  );
  if (!l.items.length) {
    const who = f.consumer ? `of ${f.consumer} ` : "";
    setState(state, "empty", `No dead letters ${who}since ${fmtTime(l.since)} UTC.`);
  } else setState(state, "ready", "");
}
