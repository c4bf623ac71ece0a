// The API's vocabularies (GET /api/vocabulary, derived from the schema
// registry): each aggregate's statuses in lifecycle order, the message
// stages. The page hard-codes none of them. And what the data holds (GET
// /api/vocabulary/data), which places the sections' defaults on the data:
// an installation and its repositories, the days and hours that hold data.

import * as api from "./api.js";
import { h } from "./dom.js";

let cached = null;
const filled = new WeakSet(); // the selects fillStatuses filled

// vocabulary fetches the vocabulary once (again after a failure).
export function vocabulary() {
  if (!cached) {
    cached = api.get("vocabulary").catch((e) => {
      cached = null;
      throw e;
    });
  }
  return cached;
}

let observedCached = null;

// observed fetches what the data holds (GET /api/vocabulary/data: the
// installations and repositories of a sample of runs, and the spans of the
// executions, messages and metrics rows) once. It answers null when the
// API cannot tell (an error, e.g. an API without the endpoint or without
// the right to Scan): the sections then fall back to the API's clock and
// ask for an installation.
export function observed() {
  if (!observedCached) observedCached = api.get("vocabulary/data").catch(() => null);
  return observedCached;
}

// statuses returns an aggregate kind's statuses in lifecycle order.
export async function statuses(kind) {
  const v = await vocabulary();
  for (const d of v.domains || []) {
    for (const a of d.aggregates || []) {
      if (a.kind === kind) return (a.statuses || []).map((s) => s.name);
    }
  }
  return [];
}

// stages returns the message stages.
export async function stages() {
  return (await vocabulary()).stages || [];
}

// fillStatuses adds the statuses of an aggregate kind to a <select> as
// options once: first the one named first (the form's default), then the
// others in lifecycle order, after the options the page has (e.g. "any").
// A vocabulary that cannot be fetched leaves the select as it is: the
// section's own request reports the error.
export async function fillStatuses(select, kind, first) {
  if (filled.has(select)) return;
  let names;
  try {
    names = await statuses(kind);
  } catch {
    return;
  }
  if (filled.has(select)) return;
  filled.add(select);
  const ordered = names.filter((s) => s === first).concat(names.filter((s) => s !== first));
  select.append(...ordered.map((s) => h("option", {}, s)));
}
