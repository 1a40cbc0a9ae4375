// The live view of an activity: draws, wins per prize against stock, stock left, delivery
// backlog and failures, draws per minute, and the reconciliation report; refreshed every few
// seconds while it is on screen.

import { api, h, notify } from "/web/api.js";
import { report } from "/web/console-fields.js";
import { drawsChart } from "/web/chart.js";
import { localClock, localTime, localZone } from "/web/times.js";

const EVERY_MS = 3000;
const MINUTES = 60;

export class LiveView {
  constructor() {
    this.node = h("div", { class: "live" });
    this.picker = h("select", { id: "live-activity", onchange: () => this.refresh() });
    this.body = h("div", { class: "live-body" });
    this.stamp = h("span", { class: "muted", id: "live-updated" });
    this.node.append(
      h("div", { class: "row toolbar" },
        h("label", {}, "Activity", this.picker),
        h("button", { onclick: () => this.refresh() }, "Refresh now"), this.stamp),
      this.body);
    this.timer = null;
  }

  // activities: [{id, name, state}], stored ones; the running ones first.
  setActivities(activities) {
    const current = this.picker.value;
    const order = [...activities].sort((a, b) => (b.state === "running") - (a.state === "running") || a.id - b.id);
    this.picker.replaceChildren(...order.map((a) => h("option", { value: String(a.id) }, `${a.id} ${a.name} (${a.state})`)));
    if (order.some((a) => String(a.id) === current)) this.picker.value = current;
  }

  start() {
    this.stop();
    this.refresh();
    this.timer = setInterval(() => document.visibilityState === "visible" && this.refresh(), EVERY_MS);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
  }

  async refresh() {
    const id = this.picker.value;
    if (!id) {
      this.body.replaceChildren(h("p", { class: "muted" }, "No activity yet: create one in the Campaign tab."));
      return;
    }
    try {
      const [odds, deliveries, drift, series, failed, warnings] = await Promise.all([
        api(`/api/activities/${id}`),
        api(`/api/admin/deliveries/activities/${id}`),
        api(`/api/admin/activities/${id}/reconciliation`),
        api(`/api/admin/activities/${id}/draws-over-time?minutes=${MINUTES}`),
        api(`/api/admin/deliveries/failed?activity_id=${id}&limit=200`),
        api(`/api/admin/activities/${id}/stock-warnings`),
      ]);
      if (this.picker.value !== id) return; // another activity was picked meanwhile
      this.render(odds, deliveries, drift, series, failed, warnings);
      this.stamp.textContent = `updated ${localClock(Date.now())}`;
    } catch (error) {
      this.stop();
      report(error);
    }
  }

  render(odds, deliveries, drift, series, failed, warnings) {
    const draws = deliveries.reduce((sum, p) => sum + p.records, 0);
    const backlog = deliveries.reduce((sum, p) => sum + p.created, 0);
    const failures = deliveries.reduce((sum, p) => sum + p.failed, 0);
    const lastHour = series.reduce((sum, p) => sum + p.draws, 0);
    this.body.replaceChildren(
      h("div", { class: "stats" },
        stat("Draws", draws, "stat-draws"), stat("Last hour", lastHour, "stat-hour"),
        stat("Awaiting delivery", backlog, "stat-backlog"), stat("Failed deliveries", failures, "stat-failed", failures ? "bad" : "")),
      lowStock(warnings),
      h("h3", {}, `Draws per minute (${localZone()} time)`),
      h("div", { class: "chart-box", dataset: { testid: "draws-chart" } }, drawsChart(series, { width: Math.max(280, this.node.clientWidth) })),
      h("h3", {}, "Prizes: wins against stock"),
      prizeTable(odds, deliveries, warnings),
      h("h3", {}, "Reconciliation"),
      reconciliation(drift),
      h("h3", {}, "Failed deliveries"),
      failedTable(failed, () => this.refresh()),
    );
  }
}

function stat(label, value, testid, kind = "") {
  return h("div", { class: `stat ${kind}`, dataset: { testid } }, h("strong", {}, String(value)), h("span", {}, label));
}

// The activity's badge: how many of its prizes are at or below their warning threshold.
function lowStock(warnings) {
  const low = warnings.filter((w) => w.warned);
  if (!low.length) return "";
  const names = low.map((w) => `${w.title} (${w.left} left, warned at ${w.warning_surplus})`).join(", ");
  return h("p", { dataset: { testid: "activity-stock-warning" } },
    h("span", { class: "badge warn" }, "Low stock"), ` ${low.length} prize${low.length > 1 ? "s" : ""} at or below the warning: ${names}`);
}

function prizeTable(odds, deliveries, warnings) {
  const won = new Map(deliveries.map((p) => [p.award_id, p]));
  const warned = new Map(warnings.map((w) => [w.award_id, w]));
  const rows = odds.prizes.map((p) => {
    const d = won.get(p.award_id);
    const wins = d?.records ?? 0;
    const share = p.stock ? Math.min(100, (100 * wins) / p.stock) : 0;
    const w = warned.get(p.award_id);
    const badge = w?.warned
      ? h("span", { class: "badge warn", title: `warned at ${w.warning_surplus} left`, dataset: { testid: "stock-warning" } }, `low stock: ${w.left} left`)
      : "";
    return h("tr", { dataset: { award: p.award_id } },
      h("td", {}, `${p.award_id} ${p.title} `, badge), h("td", {}, p.rate),
      h("td", { class: "num", dataset: { col: "wins" } }, String(wins)),
      h("td", { class: "num", dataset: { col: "stock" } }, String(p.stock ?? "∞")),
      // The counter may not be loaded before the first draw: stock less wins is the same.
      h("td", { class: "num", dataset: { col: "left" } }, String(p.stock_left ?? (p.stock == null ? "∞" : p.stock - wins))),
      h("td", {}, p.stock ? h("meter", { min: 0, max: 100, value: share, title: `${share.toFixed(1)} % of stock won` }) : ""),
      h("td", { class: "num" }, String(d?.created ?? 0)), h("td", { class: "num" }, String(d?.failed ?? 0)));
  });
  return table(["Prize", "Rate", "Won", "Stock", "Left", "", "Awaiting", "Failed"], rows, "prize-table");
}

function reconciliation(drift) {
  if (!drift.length) return h("p", { class: "muted" }, "No stocked prizes.");
  const rows = drift.map((p) => {
    const healthy = (p.drift ?? 0) === 0 && p.oversold === 0;
    return h("tr", {},
      h("td", {}, String(p.award_id)), ...[p.stock, p.claims, p.wins, p.left ?? "–", p.drift ?? "–", p.leaked, p.oversold].map((v) => h("td", { class: "num" }, String(v))),
      h("td", {}, h("span", { class: `badge ${healthy ? "ok" : "bad"}` }, healthy ? "ok" : "check")));
  });
  return table(["Prize", "Stock", "Claimed", "Won", "Counter", "Drift", "Leaked", "Oversold", ""], rows, "reconciliation");
}

function failedTable(failed, refresh) {
  if (!failed.length) return h("p", { class: "muted", dataset: { testid: "no-failures" } }, "None.");
  const rows = failed.map((f) =>
    h("tr", { dataset: { order: f.order_id } },
      h("td", {}, f.order_id), h("td", {}, f.user_id), h("td", {}, String(f.award_id)),
      h("td", { dataset: { col: "won-at" } }, localTime(f.created_at)),
      h("td", { dataset: { col: "error" } }, errorCell(f.error)),
      h("td", {}, h("button", { onclick: (e) => resend(f, e.currentTarget, refresh) }, "Send again"))));
  return table(["Order", "User", "Prize", "Won at", "Why", ""], rows, "failed-table");
}

// The last delivery attempt's error: its stable code, the message on hover and beneath.
function errorCell(error) {
  if (!error) return h("span", { class: "muted" }, "unknown");
  return h("span", { title: error.message }, h("code", {}, error.code), h("br"), h("small", { class: "muted" }, error.message));
}

async function resend(win, button, refresh) {
  button.disabled = true;
  try {
    await api(`/api/admin/deliveries/${win.order_id}/resend`, { method: "POST" });
    notify(`Order ${win.order_id} sent again.`, "ok");
    refresh();
  } catch (error) {
    button.disabled = false;
    report(error);
  }
}

const numeric = new Set(["Won", "Stock", "Left", "Awaiting", "Failed", "Claimed", "Counter", "Drift", "Leaked", "Oversold"]);

function table(heads, rows, testid) {
  return h("div", { class: "scroll" },
    h("table", { dataset: { testid } }, h("thead", {}, h("tr", {}, ...heads.map((t) => h("th", { class: numeric.has(t) ? "num" : undefined }, t)))), h("tbody", {}, ...rows)));
}
