// The prize board: up to eight prizes on seed 004's nine-grid (a ring of 8 cells around the
// draw button, a light that runs around it), more on a wheel (wheel.js). Each prize is shown
// once: a cell is never filled with a prize twice, which would suggest odds it does not have;
// cells left over are plainly empty. Both land on the prize the server returned.
//
// Stable hooks for tests: [data-testid=board] carries data-state (idle | spinning | done |
// error), data-draws (draws finished on this page) and data-layout (grid | wheel); on the
// grid, each [data-testid=cell] carries data-award, the lit one has the class "lit", and
// [data-testid=empty-cell] are the cells no prize fills; the wheel's hooks are in wheel.js;
// [data-testid=result] names the prize won.
import { h } from "/web/api.js";
import { list, t } from "/web/i18n.js";
import { Wheel } from "/web/wheel.js";

const STEP_MS = 55; // one move of the light
const MAX_STEPS = 24; // ≤ 1.4 s whatever the ring: tests stay fast, players are not kept waiting
const RING = [[1, 1], [1, 2], [1, 3], [2, 3], [3, 3], [3, 2], [3, 1], [2, 1]]; // clockwise

const reduced = () => matchMedia("(prefers-reduced-motion: reduce)").matches;
const pause = (ms) => new Promise((done) => setTimeout(done, ms));

// The awards on the board: every prize, then the fallback if it is not one of them; `weight`
// is the published chance of each (the fallback's share added to its own).
export function boardItems(mine, odds) {
  const items = byPriority(mine.prizes).map((p) => ({ ...p, weight: Number(p.rate) }));
  let fallback = items.find((p) => p.award_id === odds.fallback_award_id);
  if (!fallback) {
    fallback = { award_id: odds.fallback_award_id, title: odds.fallback_title, weight: 0, fallback: true };
    items.push(fallback);
  }
  fallback.weight += Number(odds.fallback_rate);
  return items;
}

// A prize's card on the board: its image and its level ("一等奖", or "Level 1" when the
// campaign names none). [data-testid=prize-image] and [data-testid=level] are test hooks.
export function cardParts(card, title) {
  if (!card) return [];
  const parts = [];
  if (card.image_url) {
    parts.push(h("img", { class: "prize-image", "data-testid": "prize-image", src: card.image_url, alt: title ?? "", loading: "lazy" }));
  }
  const level = card.level_name || (card.level ? t("board.level", { n: card.level }) : "");
  if (level) parts.push(h("span", { class: "badge level", "data-testid": "level" }, level));
  return parts;
}

// The board's order: the campaign's priority (lower first), then the strategy's.
export function byPriority(items) {
  return items.map((item, i) => [item.card?.priority ?? 0, i, item]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((x) => x[2]);
}

// A prize's card, title and badges: locked for a few more draws, sold out.
function prizeBody(item) {
  const badges = [];
  if (item.draws_to_unlock > 0) {
    badges.push(h("span", { class: "badge warn", "data-testid": "lock" },
      t("board.unlocks", { n: item.draws_to_unlock })));
  }
  if (item.stock_left === 0) badges.push(h("span", { class: "badge bad" }, t("board.sold_out")));
  return [...cardParts(item.card, item.title), h("span", { class: "cell-title" }, item.title ?? ""), ...badges];
}

// The nine-grid: the prizes spread evenly over the ring, the button in the middle.
class NineGrid {
  constructor(button) {
    this.node = h("div", { class: "nine-grid" });
    this.button = button;
    this.cells = []; // the prize cells in ring order (no empty one)
    this.at = 0;
  }

  render(items) {
    const spots = RING.map(() => null);
    const rest = [];
    for (const item of items) {
      const cell = item.card?.cell;
      if (cell && !spots[cell - 1]) spots[cell - 1] = item;
      else rest.push(item);
    }
    if (rest.length === items.length) {
      rest.forEach((item, i) => { spots[Math.floor((i * RING.length) / rest.length)] = item; });
    } else {
      // the cells the campaign names first (seed 004 position), the others in the free ones
      rest.forEach((item) => { spots[spots.indexOf(null)] = item; });
    }
    const nodes = spots.map((item, i) => {
      const cell = item
        ? h("div", { class: "cell", "data-testid": "cell", "data-award": item.award_id }, ...prizeBody(item))
        : h("div", { class: "cell empty", "data-testid": "empty-cell", "aria-hidden": "true" });
      const [row, col] = RING[i];
      cell.style.cssText = `grid-row:${row};grid-column:${col}`; // CSSOM: allowed by the CSP
      return cell;
    });
    this.cells = nodes.filter((cell) => cell.dataset.award);
    this.at %= Math.max(1, this.cells.length); // where the light is, on a ring maybe shorter now
    this.button.style.cssText = "grid-row:2;grid-column:2";
    this.node.replaceChildren(...nodes, this.button);
  }

  light(awardId) {
    for (const cell of this.cells) cell.classList.toggle("lit", Number(cell.dataset.award) === awardId);
  }

  spin() {
    this.timer = setInterval(() => {
      this.at = (this.at + 1) % this.cells.length;
      this.cells.forEach((cell, i) => cell.classList.toggle("lit", i === this.at));
    }, STEP_MS);
  }

  halt() {
    clearInterval(this.timer);
  }

  // The light runs on to the cell of `awardId`, slowing down: part of a lap at least (none
  // when `instant`: the board lights the cell).
  async land(awardId, instant) {
    this.halt();
    if (instant) return;
    const n = this.cells.length;
    const target = this.cells.findIndex((c) => Number(c.dataset.award) === awardId);
    if (target < 0) return;
    let steps = (target - this.at + n) % n;
    while (steps + n <= MAX_STEPS / 2) steps += n;
    for (let s = 0; s < steps; s++) {
      await pause(STEP_MS + s * 4);
      this.at = (this.at + 1) % n;
      this.cells.forEach((cell, i) => cell.classList.toggle("lit", i === this.at));
    }
  }
}

export class Board {
  constructor(onDraw) {
    this.button = h("button", { class: "primary draw", "data-testid": "draw", onclick: onDraw }, t("board.draw"));
    this.grid = h("div", { class: "board", "data-testid": "board", "data-state": "idle", "data-draws": "0" });
    this.result = h("p", { class: "result", "data-testid": "result", "aria-live": "polite" });
    this.view = null;
    this.won = null; // the award lit, kept when the board is read again
  }

  // Up to 8 prizes on the nine-grid, more on the wheel.
  render(items) {
    const layout = items.length <= RING.length ? "grid" : "wheel";
    if (this.grid.dataset.layout !== layout) {
      this.view?.halt();
      this.view = layout === "grid" ? new NineGrid(this.button) : new Wheel(this.button, prizeBody);
      this.grid.dataset.layout = layout;
      this.grid.replaceChildren(this.view.node);
    }
    this.view.render(items);
    this.view.light(this.won);
  }

  // Another activity: no prize lit, none named.
  clear() {
    this.won = null;
    this.view?.light(null);
    this.result.textContent = "";
    this.grid.dataset.state = "idle";
  }

  // Start the board while the request is in flight; `stop` lands it.
  start() {
    this.grid.dataset.state = "spinning";
    this.result.textContent = "";
    this.won = null;
    this.view.light(null);
    if (!reduced()) this.view.spin();
  }

  async stop(awardId, title) {
    await this.view.land(awardId, reduced());
    this.won = awardId;
    this.view.light(awardId);
    this.result.textContent = title;
  }

  done(ok) {
    this.view.halt();
    if (!ok) this.clear();
    this.grid.dataset.state = ok ? "done" : "error";
    if (ok) this.grid.dataset.draws = String(Number(this.grid.dataset.draws) + 1);
  }
}

// Weight tiers: from which draw a tier's prizes are the only ones, and how far the player is.
export function tiers(mine, titles) {
  if (!mine.weight_tiers.length) return h("p", { class: "muted" }, t("tiers.none"));
  return h("ul", { class: "tiers", "data-testid": "tiers" }, mine.weight_tiers.map((tier) => {
    const names = tier.award_ids.map((id) => titles.get(id) ?? `#${id}`);
    const left = tier.draws_to_reach;
    return h("li", {}, t("tiers.line", { n: tier.threshold, names: list(names) }), " ",
      h("span", { class: `badge ${left > 0 ? "" : "ok"}` },
        left > 0 ? t("tiers.to_go", { n: left }) : t("tiers.reached")));
  }));
}
