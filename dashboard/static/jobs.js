// RunsOn jobs and runs (seed 003): an installation's jobs by status, or a
// repository's since a date with its success rate and average duration;
// in_progress jobs older than N hours (the API's stuck query) highlighted;
// one run's jobs and whether the run is complete. The installations and
// repositories the data holds (the API's observed sample of runs) are
// offered as choices, and without an installation in the state the first
// one is shown: the one with the most runs in progress, by its in_progress
// jobs, or, with none in progress, its first repository's jobs.

import * as api from "./api.js";
import { errText, fmtDuration, fmtInt, fmtPct, fmtTime, h, now, num, setState } from "./dom.js";
import { hidePager, setPager } from "./pager.js";
import { go, href, val } from "./state.js";
import { fillStatuses, observed } from "./vocab.js";

const PREFIX = "j.";
const PAGER = { prev: "jobs-prev", next: "jobs-next", page: "jobs-page" };
// DEFAULT_STATUS is the status listed first, and the one stuck jobs have.
const DEFAULT_STATUS = "in_progress";

// filters returns the section's filters from the state, with defaults:
// the first of installations (the API's observed ones) when the state
// names none, and its first repository when it has no run in progress and
// the state names neither a status nor a repository.
export function filters(p, installations = []) {
  const first = installations[0];
  const named = p.has(PREFIX + "inst");
  const byRepo = !named && first && !first.inProgressRuns && !p.has(PREFIX + "status") && !p.has(PREFIX + "repo");
  return {
    inst: val(p, PREFIX + "inst", first ? String(first.installation) : ""),
    status: val(p, PREFIX + "status", DEFAULT_STATUS),
    stuck: val(p, PREFIX + "stuck", "6"),
    repo: val(p, PREFIX + "repo", byRepo ? (first.repositories || [])[0] || "" : ""),
    since: val(p, PREFIX + "since"),
    cursor: val(p, PREFIX + "cursor"),
    run: val(p, PREFIX + "run"),
  };
}

export function init() {
  const form = document.getElementById("jobs-form");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const d = new FormData(form);
    go({
      "j.inst": d.get("inst").trim(),
      "j.status": d.get("status"),
      "j.stuck": d.get("stuck"),
      "j.repo": d.get("repo").trim(),
      "j.since": d.get("since"),
      "j.cursor": null,
      "j.prev": null,
      "j.run": null,
    }, PREFIX);
  });
}

// listParams are the API parameters of the job list: by repository (and
// since) when a repository is given, else by status.
export function listParams(f) {
  if (f.repo) return { installation: f.inst, repo: f.repo, since: f.since ? f.since + "T00:00:00Z" : "", cursor: f.cursor };
  return { installation: f.inst, status: f.status, cursor: f.cursor };
}

export async function load(p) {
  const data = await observed();
  const installations = (data && data.installations) || [];
  const f = filters(p, installations);
  const form = document.getElementById("jobs-form");
  await fillStatuses(form.status, "job", DEFAULT_STATUS);
  offerChoices(installations, f.inst);
  form.inst.value = f.inst;
  form.status.value = f.status;
  form.stuck.value = f.stuck;
  form.repo.value = f.repo;
  form.since.value = f.since;
  document.getElementById("stuck-hours").textContent = f.stuck;
  document.getElementById("jobs-section").classList.toggle("by-repo", !!f.repo);
  const state = document.getElementById("jobs-state");
  const body = document.querySelector("#jobs-table tbody");
  const stuckEl = document.querySelector('[data-testid="jobs-stuck-count"]');
  const countEl = document.querySelector('[data-testid="jobs-count"]');
  hidePager(PAGER);
  if (!/^\d+$/.test(f.inst)) {
    body.replaceChildren();
    setValue(stuckEl, null, "–");
    setValue(countEl, null, "–");
    document.getElementById("run-panel").hidden = true;
    setState(state, "empty", "Enter an installation id (0 for a GitHub Enterprise Server without one).");
    return;
  }
  setState(state, "loading", "Loading jobs…");
  const [list, stuck] = await Promise.allSettled([
    api.get("jobs", listParams(f)),
    api.all("jobs", { installation: f.inst, status: DEFAULT_STATUS, stuckHours: f.stuck }, 20),
  ]);
  const runLoad = loadRun(f);
  let stuckKeys = new Set();
  if (stuck.status === "fulfilled") {
    stuckKeys = new Set(stuck.value.items.map(jobKey));
    setValue(stuckEl, stuck.value.items.length, fmtInt(stuck.value.items.length) + (stuck.value.truncated ? "+" : ""));
  } else {
    setValue(stuckEl, null, "–");
  }
  if (list.status === "rejected") {
    body.replaceChildren();
    setValue(countEl, null, "–");
    setRepoStats(null);
    setState(state, "error", errText(list.reason));
    await runLoad;
    return;
  }
  const page = list.value;
  const items = page.items || [];
  body.replaceChildren(...items.map((it) => row(it, f, stuckKeys)));
  setValue(countEl, items.length, fmtInt(items.length));
  setRepoStats(f.repo ? page.stats || null : null);
  setPager(p, PREFIX, PAGER, page.next || "");
  if (stuck.status === "rejected") setState(state, "error", "Stuck jobs: " + errText(stuck.reason));
  else if (items.length === 0) setState(state, "empty", f.repo ? "No jobs of this repository in this period." : `No ${f.status} jobs.`);
  else setState(state, "ready", "");
  await runLoad;
}

// offerChoices lists the observed installations (with their runs) and the
// repositories of the installation shown in the form's datalists.
function offerChoices(installations, inst) {
  document.getElementById("inst-choices").replaceChildren(
    ...installations.map((i) => h("option", { value: String(i.installation) }, `${i.runs} runs, ${i.inProgressRuns} in progress`)),
  );
  const cur = installations.find((i) => String(i.installation) === inst);
  document.getElementById("repo-choices").replaceChildren(...((cur && cur.repositories) || []).map((r) => h("option", { value: r })));
}

// jobKey identifies a job: installation and job id.
export function jobKey(it) {
  return it.pk || `${it.installation_id}#${it.job_id}`;
}

function row(it, f, stuckKeys) {
  const stuck = stuckKeys.has(jobKey(it));
  const created = Date.parse(it.created_at);
  const age = Number.isNaN(created) ? null : (now() - created) / 1000;
  const runRef = it.run_id ? `${it.run_id}/${it.run_attempt || 1}` : "";
  return h(
    "tr",
    { "data-testid": "job-row", "data-key": jobKey(it), "data-stuck": stuck ? "true" : "false", class: stuck ? "stuck" : null },
    h("td", { class: "mono" }, it.job_html_url ? h("a", { href: it.job_html_url, rel: "noreferrer", target: "_blank" }, String(it.job_id)) : String(it.job_id)),
    h("td", {}, it.repo_full_name || "–"),
    h("td", {}, [it.workflow_name, it.job_name].filter(Boolean).join(" · ") || "–"),
    h("td", {}, h("span", { class: "badge badge-" + String(it.status || "") }, it.status || "–"), stuck ? h("span", { class: "badge badge-stuck" }, "stuck") : null),
    h("td", {}, it.conclusion || "–"),
    h("td", {}, fmtTime(it.created_at)),
    h("td", { class: "num", "data-testid": "job-age", "data-value": age === null ? "" : Math.round(age) }, age === null ? "–" : fmtDuration(age)),
    h("td", {}, runRef ? h("a", { href: href({ "j.run": runRef }), "data-testid": "job-run-link" }, runRef) : "–"),
  );
}

// setRepoStats shows a repository's stats (the API's RepoStats:
// successRate, avgDurationMs).
function setRepoStats(st) {
  const rate = st ? num(st.successRate) : null;
  const avgMs = st ? num(st.avgDurationMs) : null;
  setValue(document.querySelector('[data-testid="repo-success-rate"]'), rate, fmtPct(rate));
  setValue(document.querySelector('[data-testid="repo-avg-duration"]'), avgMs, fmtDuration(avgMs === null ? null : avgMs / 1000));
}

async function loadRun(f) {
  const panel = document.getElementById("run-panel");
  const m = /^(\d+)\/(\d+)$/.exec(f.run || "");
  if (!m) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  document.getElementById("run-id").textContent = `${m[1]} attempt ${m[2]}`;
  document.getElementById("run-close").href = href({ "j.run": null });
  const state = document.getElementById("run-state");
  const body = document.querySelector("#run-jobs tbody");
  setState(state, "loading", "Loading run…");
  let r;
  try {
    r = await api.get(["runs", f.inst, m[1], m[2]]);
  } catch (e) {
    body.replaceChildren();
    setState(state, "error", errText(e));
    return;
  }
  const run = r.run || {};
  const jobs = r.jobs || [];
  const q = (id) => document.querySelector(`[data-testid="${id}"]`);
  // A counter the summary row lacks is 0 (the row exists once a job of the
  // run is known); without a row every counter is unknown.
  const counter = (k) => (r.run ? (num(run[k]) ?? 0) : null);
  setValue(q("run-complete"), r.complete ? "true" : "false", r.complete ? "yes" : "no");
  for (const k of ["total_jobs", "completed_jobs", "failed_jobs"]) {
    setValue(q("run-" + k.replace(/_/g, "-")), counter(k), fmtInt(counter(k)));
  }
  setValue(q("run-conclusion"), run.conclusion || "", run.conclusion || (r.complete ? "–" : "in progress"));
  body.replaceChildren(
    ...jobs.map((it) =>
      h(
        "tr",
        { "data-testid": "run-job-row", "data-key": jobKey(it), "data-status": it.status },
        h("td", { class: "mono" }, String(it.job_id)),
        h("td", {}, it.job_name || "–"),
        h("td", {}, h("span", { class: "badge badge-" + String(it.status || "") }, it.status || "–")),
        h("td", {}, it.conclusion || "–"),
        h("td", {}, fmtTime(it.started_at)),
        h("td", {}, fmtTime(it.completed_at)),
      ),
    ),
  );
  setState(state, jobs.length ? "ready" : "empty", jobs.length ? "" : "This run has no jobs.");
}

function setValue(el, value, text) {
  el.textContent = text;
  el.dataset.value = value === null || value === undefined ? "" : String(value);
}
