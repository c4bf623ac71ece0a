// A grouped bar chart drawn as inline SVG: no library, no canvas. Each bar
// carries data-testid "chart-bar-<category>-<series key>" and its raw value
// in data-value; a missing value draws no bar.

import { s } from "./dom.js";

const W = 1000;
const H = 300;
const M = { top: 16, right: 16, bottom: 46, left: 72 };

// niceMax rounds a maximum up to 1, 2, 2.5 or 5 times a power of ten.
export function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

// barChart replaces the content of svg with the chart.
//   categories: labels of the x axis (e.g. dates)
//   series: [{key, label, values: [number|null per category]}]
//   format: renders a value for the axis and the tooltips
//   integer: the values are counts (the axis gets whole-number ticks)
// With no value at all it draws the frame and says so.
export function barChart(svg, { categories, series, format, label, integer }) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label || "chart");
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  let max = 0;
  for (const se of series) for (const v of se.values) if (v !== null && v > max) max = v;
  const top = niceMax(max);
  const y = (v) => M.top + ph - (v / top) * ph;
  const empty = !series.some((se) => se.values.some((v) => v !== null && v !== undefined));

  const grid = s("g", { class: "grid" });
  const ticks = empty ? 1 : integer && top < 5 ? Math.max(1, top) : 5;
  for (let i = 0; i <= ticks; i++) {
    const v = (top * i) / ticks;
    grid.append(
      s("line", { x1: M.left, x2: W - M.right, y1: y(v), y2: y(v) }),
      s("text", { x: M.left - 8, y: y(v) + 4, "text-anchor": "end", class: "tick" }, empty ? "" : format(v)),
    );
  }
  svg.append(grid);

  const n = Math.max(categories.length, 1);
  const band = pw / n;
  const gap = Math.min(12, band * 0.2);
  const bw = Math.max(1, (band - gap) / Math.max(series.length, 1));
  const bars = s("g", { class: "bars" });
  categories.forEach((cat, i) => {
    const x0 = M.left + i * band + gap / 2;
    series.forEach((se, j) => {
      const v = se.values[i];
      if (v === null || v === undefined) return;
      const yy = y(v);
      bars.append(
        s(
          "rect",
          {
            x: (x0 + j * bw).toFixed(1),
            y: yy.toFixed(1),
            width: Math.max(1, bw - 1).toFixed(1),
            height: Math.max(0, M.top + ph - yy).toFixed(1),
            class: "bar series-" + j,
            "data-testid": `chart-bar-${cat}-${se.key}`,
            "data-value": v,
          },
          s("title", {}, `${se.label} ${cat}: ${format(v)}`),
        ),
      );
    });
    const every = Math.ceil(n / 16);
    if (i % every === 0) {
      bars.append(s("text", { x: (x0 + (band - gap) / 2).toFixed(1), y: H - M.bottom + 18, "text-anchor": "middle", class: "tick" }, String(cat).slice(5)));
    }
  });
  svg.append(bars);
  if (empty) svg.append(s("text", { x: M.left + pw / 2, y: M.top + ph / 2, "text-anchor": "middle", class: "nodata" }, "no data in this range"));
  svg.append(s("line", { class: "axis", x1: M.left, x2: W - M.right, y1: M.top + ph, y2: M.top + ph }));

  const legend = s("g", { class: "legend" });
  series.forEach((se, j) => {
    const x = M.left + j * 190;
    legend.append(
      s("rect", { x, y: H - 16, width: 12, height: 12, class: "bar series-" + j }),
      s("text", { x: x + 18, y: H - 6, class: "tick" }, se.label),
    );
  });
  svg.append(legend);
}
