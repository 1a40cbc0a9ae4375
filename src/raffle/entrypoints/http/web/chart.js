// Bars of a count per minute as inline SVG: no library, scales to its box at any width.

const SVG = "http://www.w3.org/2000/svg";

function el(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function clock(iso) {
  const at = new Date(iso);
  return `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`;
}

// points: [{minute: ISO text, draws: n}], oldest first. The y axis starts at 0 and ends at a
// round number at or above the busiest minute, so equal bars mean equal counts.
// `width`: the pixels it will take, so its text keeps its size at any width.
export function drawsChart(points, { width = 600, height = 160, label = "Draws per minute" } = {}) {
  const pad = { left: 34, right: 8, top: 10, bottom: 22 };
  const most = Math.max(2, ...points.map((p) => p.draws)); // at least 0, 1, 2 on the axis
  const top = niceCeiling(most);
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const svg = el("svg", {
    viewBox: `0 0 ${width} ${height}`, role: "img", class: "chart",
    "aria-label": `${label}: ${points.reduce((s, p) => s + p.draws, 0)} in the last ${points.length} minutes`,
  });
  const fractions = top % 2 ? [0, 1] : [0, 0.5, 1];
  for (const fraction of fractions) {
    const y = pad.top + plotH * (1 - fraction);
    svg.append(el("line", { x1: pad.left, x2: width - pad.right, y1: y, y2: y, class: "grid" }));
    svg.append(el("text", { x: pad.left - 4, y: y + 4, "text-anchor": "end" }, String(Math.round(top * fraction))));
  }
  const step = plotW / Math.max(points.length, 1);
  points.forEach((p, i) => {
    const h = (p.draws / top) * plotH;
    const bar = el("rect", {
      x: pad.left + i * step + step * 0.1, y: pad.top + plotH - h,
      width: Math.max(step * 0.8, 1), height: h, class: "bar", "data-draws": p.draws,
    });
    bar.append(el("title", {}, `${clock(p.minute)}: ${p.draws}`));
    svg.append(bar);
  });
  if (points.length) {
    const y = height - 6;
    svg.append(el("text", { x: pad.left, y }, clock(points[0].minute)));
    svg.append(el("text", { x: width - pad.right, y, "text-anchor": "end" }, clock(points.at(-1).minute)));
  }
  return svg;
}

function niceCeiling(n) {
  const magnitude = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * magnitude >= n) return m * magnitude;
  return 10 * magnitude;
}
