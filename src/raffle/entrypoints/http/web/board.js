// The prize board (seed 004's nine-grid): the prizes on a ring of cells around the draw
// button, a light that runs around the ring and stops on the prize the server returned.
//
// Stable hooks for tests: [data-testid=board] carries data-state (idle | spinning | done |
// error) and data-draws (draws finished on this page); each [data-testid=cell] carries
// data-award; the lit cell has the class "lit"; [data-testid=result] names the prize won.
import { h } from "/web/api.js";

const STEP_MS = 55; // one move of the light
const MAX_STEPS = 24; // ≤ 1.4 s whatever the ring: tests stay fast, players are not kept waiting

const reduced = () => matchMedia("(prefers-reduced-motion: reduce)").matches;

// The cells of a k×k grid's outer ring in clockwise order, as [row, column] from 1.
function ring(k) {
  const cells = [];
  for (let c = 1; c <= k; c++) cells.push([1, c]);
  for (let r = 2; r <= k; r++) cells.push([r, k]);
  for (let c = k - 1; c >= 1; c--) cells.push([k, c]);
  for (let r = k - 1; r >= 2; r--) cells.push([r, 1]);
  return cells;
}

// The awards on the board: every prize, then the fallback if it is not one of them.
export function boardItems(mine, odds) {
  const items = mine.prizes.map((p) => ({ ...p }));
  if (!items.some((p) => p.award_id === odds.fallback_award_id)) {
    items.push({ award_id: odds.fallback_award_id, title: odds.fallback_title, fallback: true });
  }
  return items;
}

function cellBody(item) {
  const badges = [];
  if (item.draws_to_unlock > 0) {
    badges.push(h("span", { class: "badge warn", "data-testid": "lock" },
      `unlocks after ${item.draws_to_unlock} more draw${item.draws_to_unlock === 1 ? "" : "s"}`));
  }
  if (item.stock_left === 0) badges.push(h("span", { class: "badge bad" }, "sold out"));
  return [h("span", { class: "cell-title" }, item.title ?? ""), ...badges];
}

export class Board {
  constructor(onDraw) {
    this.button = h("button", { class: "primary draw", "data-testid": "draw", onclick: onDraw }, "Draw");
    this.grid = h("div", { class: "board", "data-testid": "board", "data-state": "idle", "data-draws": "0" });
    this.result = h("p", { class: "result", "data-testid": "result", "aria-live": "polite" });
    this.cells = [];
    this.timer = null;
    this.lit = -1;
  }

  // Lay out the ring: the smallest k×k grid whose ring holds every item (3×3 up to 8 items).
  render(items) {
    let k = 3;
    while (4 * (k - 1) < items.length) k++;
    const spots = ring(k);
    this.grid.style.setProperty("--k", k);
    this.cells = spots.map(([row, col], i) => {
      const item = items[i] ?? items.find((p) => p.fallback) ?? items[items.length - 1] ?? {};
      const cell = h("div", { class: "cell", "data-testid": "cell", "data-award": item.award_id },
        ...cellBody(item));
      cell.style.cssText = `grid-row:${row};grid-column:${col}`; // CSSOM: allowed by the CSP
      return cell;
    });
    this.button.style.cssText = `grid-row:2/${k};grid-column:2/${k}`;
    this.grid.replaceChildren(...this.cells, this.button);
    this.light(this.lit); // a board read again after a draw keeps the prize lit
  }

  light(index) {
    this.lit = index;
    this.cells.forEach((cell, i) => cell.classList.toggle("lit", i === index));
  }

  // Another activity: no prize lit, none named.
  clear() {
    this.light(-1);
    this.result.textContent = "";
    this.grid.dataset.state = "idle";
  }

  // Start the light while the request is in flight; `stop` lands it.
  start() {
    this.grid.dataset.state = "spinning";
    this.result.textContent = "";
    this.at = 0;
    if (reduced()) return;
    this.timer = setInterval(() => this.light((this.at = (this.at + 1) % this.cells.length)), STEP_MS);
  }

  // Land on the first cell of `awardId` (a prize not on the board lights no cell).
  async stop(awardId, title) {
    clearInterval(this.timer);
    const target = this.cells.findIndex((c) => Number(c.dataset.award) === awardId);
    if (!reduced() && target >= 0) await this.run(target);
    this.light(target);
    this.result.textContent = title;
  }

  async run(target) {
    const n = this.cells.length;
    let steps = (target - this.at + n) % n;
    while (steps + n <= MAX_STEPS / 2) steps += n; // at least part of a lap, never over the cap
    for (let s = 0; s < steps; s++) {
      await new Promise((done) => setTimeout(done, STEP_MS + s * 4)); // slowing down
      this.light((this.at = (this.at + 1) % n));
    }
  }

  done(ok) {
    clearInterval(this.timer);
    if (!ok) this.light(-1);
    this.grid.dataset.state = ok ? "done" : "error";
    if (ok) this.grid.dataset.draws = String(Number(this.grid.dataset.draws) + 1);
  }
}

// Weight tiers: from which draw a tier's prizes are the only ones, and how far the player is.
export function tiers(mine, titles) {
  if (!mine.weight_tiers.length) return h("p", { class: "muted" }, "Every prize is in play on every draw.");
  return h("ul", { class: "tiers", "data-testid": "tiers" }, mine.weight_tiers.map((t) => {
    const names = t.award_ids.map((id) => titles.get(id) ?? `#${id}`).join(", ");
    const left = t.draws_to_reach;
    const where = left > 0 ? `${left} more draw${left === 1 ? "" : "s"} to go` : "reached";
    return h("li", {}, `From draw ${t.threshold}: only ${names} — `,
      h("span", { class: `badge ${t.draws_to_reach > 0 ? "" : "ok"}` }, where));
  }));
}
