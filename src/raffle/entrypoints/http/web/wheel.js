// The wheel, for more prizes than the nine-grid holds: one sector per prize, as wide as its
// published chance (a prize ten times likelier has a sector ten times wider, so the picture
// tells the odds the table publishes), turning under a fixed pointer at the top and stopping
// with the prize won under it. A legend names every prize with its chance, those whose sector
// is too thin to label included.
//
// Stable hooks for tests: [data-testid=wheel] (data-angle: its turn in degrees, clockwise),
// [data-testid=sector] per prize (data-award, class "lit" once won), [data-testid=legend]
// rows (data-award, class "lit"); the pointer is at the top centre of the wheel.
import { h } from "/web/api.js";
import { percent } from "/web/prizes.js";

const SVG = "http://www.w3.org/2000/svg";
const RADIUS = 100;
const SPEED = 540; // degrees a second while the answer is awaited; landing slows down from it
const LABEL_FROM = 8; // degrees: a thinner sector is named in the legend only
const LABEL_SPAN = [30, 92]; // where a label runs along its sector's middle, from the centre
const GOLDEN = 137.508; // hues this far apart: neighbouring sectors never look alike

function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

// The point at `degrees` clockwise from the top, `r` from the centre.
function point(degrees, r) {
  const a = (degrees * Math.PI) / 180;
  return `${(r * Math.sin(a)).toFixed(3)} ${(-r * Math.cos(a)).toFixed(3)}`;
}

function sectorPath(from, to) {
  if (to - from >= 359.999) return `M0 ${-RADIUS} A${RADIUS} ${RADIUS} 0 1 1 0 ${RADIUS} A${RADIUS} ${RADIUS} 0 1 1 0 ${-RADIUS} Z`;
  const large = to - from > 180 ? 1 : 0;
  return `M0 0 L${point(from, RADIUS)} A${RADIUS} ${RADIUS} 0 ${large} 1 ${point(to, RADIUS)} Z`;
}

const colour = (i) => `hsl(${(i * GOLDEN) % 360} 75% 82%)`;

// Each item's [from, to] in degrees, in proportion to its weight (equal if none has one).
function spans(items) {
  const total = items.reduce((sum, item) => sum + item.weight, 0);
  const share = (item) => (total > 0 ? item.weight / total : 1 / items.length);
  let from = 0;
  return items.map((item) => {
    const to = from + 360 * share(item);
    const span = [from, to];
    from = to;
    return span;
  });
}

export class Wheel {
  // `body(item)`: a prize's title and badges, as the grid shows them.
  constructor(button, body) {
    this.button = button;
    this.body = body;
    this.angle = 0;
    this.spans = new Map(); // award id -> [from, to] degrees
    this.turning = s("g");
    this.svg = s("svg", { viewBox: "-110 -110 220 220", role: "img", class: "wheel-face" },
      s("circle", { r: RADIUS + 4, class: "rim" }), this.turning,
      s("polygon", { points: "-9,-110 9,-110 0,-88", class: "pointer" }));
    this.legend = h("ul", { class: "legend" });
    this.node = h("div", { class: "wheel-view" },
      h("div", { class: "wheel", "data-testid": "wheel" }, this.svg, button), this.legend);
  }

  render(items) {
    this.button.style.cssText = "";
    const found = spans(items);
    this.spans = new Map(items.map((item, i) => [item.award_id, found[i]]));
    const labels = [];
    this.turning.replaceChildren(...items.flatMap((item, i) => {
      const [from, to] = found[i];
      const out = item.stock_left === 0 ? " out" : "";
      const sector = s("path", { d: sectorPath(from, to), fill: colour(i), class: `sector${out}`,
        "data-testid": "sector", "data-award": item.award_id });
      if (to - from < LABEL_FROM) return [sector];
      // Upright where the wheel stands now: on its left half a label reads from the rim in.
      const middle = (from + to) / 2;
      const left = (middle + this.angle) % 360 > 180;
      const label = s("text", { x: left ? -LABEL_SPAN[1] : LABEL_SPAN[1], y: 0,
        class: `sector-label${left ? " left" : ""}`, transform: `rotate(${middle + (left ? 90 : -90)})` },
      item.title ?? "");
      labels.push(label);
      return [sector, label];
    }));
    this.svg.setAttribute("aria-label", items.map((item) => item.title).join(" · "));
    for (const label of labels) this.fit(label);
    this.legend.replaceChildren(...items.map((item, i) => {
      const swatch = h("span", { class: "swatch" });
      swatch.style.background = colour(i); // CSSOM: allowed by the CSP
      return h("li", { "data-testid": "legend", "data-award": item.award_id },
        swatch, ...this.body(item), h("span", { class: "muted" }, percent(item.weight)));
    }));
    this.turn(this.angle);
  }

  // A label longer than its room is squeezed into it (the legend has it in full).
  fit(label) {
    const room = LABEL_SPAN[1] - LABEL_SPAN[0];
    if (label.getComputedTextLength() > room) {
      label.setAttribute("textLength", room);
      label.setAttribute("lengthAdjust", "spacingAndGlyphs");
    }
  }

  turn(degrees) {
    this.angle = ((degrees % 360) + 360) % 360;
    this.turning.setAttribute("transform", `rotate(${this.angle.toFixed(3)})`);
    this.svg.parentNode.dataset.angle = this.angle.toFixed(3);
  }

  light(awardId) {
    for (const node of this.node.querySelectorAll("[data-award]")) {
      node.classList.toggle("lit", Number(node.dataset.award) === awardId);
    }
  }

  spin() {
    let last = performance.now();
    const frame = (now) => {
      this.turn(this.angle + (SPEED * (now - last)) / 1000);
      last = now;
      this.frame = requestAnimationFrame(frame);
    };
    this.frame = requestAnimationFrame(frame);
  }

  halt() {
    cancelAnimationFrame(this.frame);
  }

  // Turn on, slowing down evenly from the spinning speed, until the middle of the sector of
  // `awardId` is under the pointer (at once when `instant`).
  async land(awardId, instant) {
    this.halt();
    const span = this.spans.get(awardId);
    if (!span) return;
    const facing = 360 - (span[0] + span[1]) / 2; // the turn that puts it under the pointer
    if (instant) return this.turn(facing);
    let ahead = (((facing - this.angle) % 360) + 360) % 360;
    if (ahead < 180) ahead += 360; // half a turn at least: the landing is seen
    const from = this.angle;
    const ms = (2000 * ahead) / SPEED;
    const began = performance.now();
    await new Promise((done) => {
      const frame = (now) => {
        const u = Math.min(1, (now - began) / ms);
        this.turn(from + ahead * (1 - (1 - u) ** 2));
        if (u < 1) this.frame = requestAnimationFrame(frame);
        else done();
      };
      this.frame = requestAnimationFrame(frame);
    });
  }
}
