// Payments (seed 000 支付订单): the newest orders with their state, one order's history (every
// state change: when, from, to, why) and payments, refunds that failed for good with a retry
// button, and the reconciliation with the gateway's records, run on demand.
//
// Stable hooks for tests: [data-testid=payment-orders] rows (data-order, data-state);
// [data-testid=order-history]; [data-testid=failed-refunds] rows with a [data-testid=retry]
// button; [data-testid=reconcile] button and [data-testid=reconciliation] (data-clean).

import { api, h, notify } from "/web/api.js";
import { report } from "/web/console-fields.js";

const yuan = (cents) => (cents / 100).toFixed(2);
const when = (iso) => new Date(iso).toLocaleString();
const STATES = ["", "created", "paying", "paid", "closed", "refunding", "refunded"];

export class PaymentsView {
  constructor() {
    this.state = h("select", { onchange: () => this.refresh() },
      ...STATES.map((s) => h("option", { value: s }, s || "every state")));
    this.orders = h("div", { class: "scroll" });
    this.file = h("div", {});
    this.refunds = h("div", {});
    this.reconciliation = h("div", {});
    this.node = h("div", { class: "payments-admin" },
      h("div", { class: "row toolbar" }, this.state,
        h("button", { onclick: () => this.refresh() }, "Refresh"),
        h("button", { dataset: { testid: "reconcile" }, onclick: (e) => this.reconcile(e.currentTarget) }, "Reconcile with the gateway")),
      this.reconciliation, h("h3", {}, "Orders"), this.orders, this.file,
      h("h3", {}, "Failed refunds"), this.refunds);
  }

  async refresh() {
    try {
      const state = this.state.value ? `&state=${this.state.value}` : "";
      const [orders, failed] = await Promise.all([
        api(`/api/admin/payments/orders?limit=100${state}`),
        api("/api/admin/payments/refunds?state=refund_failed&limit=100"),
      ]);
      this.renderOrders(orders);
      this.renderRefunds(failed);
    } catch (error) {
      report(error);
    }
  }

  renderOrders(orders) {
    if (!orders.length) {
      this.orders.replaceChildren(h("p", { class: "muted" }, "No orders yet."));
      return;
    }
    const rows = orders.map((o) => h("tr", { dataset: { order: o.out_trade_no, state: o.state } },
      h("td", {}, h("button", { class: "link", onclick: () => this.open(o.out_trade_no) }, h("code", {}, o.out_trade_no))),
      h("td", {}, o.content_id), h("td", { class: "num" }, yuan(o.amount_cents)),
      h("td", { dataset: { testid: "state" } }, o.state), h("td", {}, when(o.created_at))));
    this.orders.replaceChildren(h("table", { dataset: { testid: "payment-orders" } },
      h("thead", {}, h("tr", {}, ...["Order", "Content", "Amount (¥)", "State", "Created"].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...rows)));
  }

  async open(number) {
    try {
      const o = await api(`/api/admin/payments/orders/${encodeURIComponent(number)}`);
      const changes = o.history.map((c) => h("li", {}, `${when(c.at)}: ${c.from_state ?? "—"} → ${c.to_state} (${c.cause})`));
      const payments = o.payments.map((p) => h("li", {}, `${p.trade_no}: ${yuan(p.amount_cents)} ${p.state}`,
        p.last_error ? ` — ${p.last_error}` : ""));
      this.file.replaceChildren(h("div", { class: "card", dataset: { testid: "order-history", order: o.out_trade_no } },
        h("h4", {}, `${o.out_trade_no} · ${o.user_id} · ${o.state}`),
        h("ol", {}, ...changes), payments.length ? h("ul", {}, ...payments) : h("p", { class: "muted" }, "No payment notified.")));
    } catch (error) {
      report(error);
    }
  }

  renderRefunds(failed) {
    if (!failed.length) {
      this.refunds.replaceChildren(h("p", { class: "muted", dataset: { testid: "no-failed-refunds" } }, "None."));
      return;
    }
    const rows = failed.map((p) => h("tr", { dataset: { trade: p.trade_no } },
      h("td", {}, h("code", {}, p.out_trade_no)), h("td", {}, h("code", {}, p.trade_no)),
      h("td", { class: "num" }, yuan(p.amount_cents)), h("td", {}, String(p.attempts)), h("td", {}, p.last_error ?? ""),
      h("td", {}, h("button", { dataset: { testid: "retry" }, onclick: (e) => this.retry(p, e.currentTarget) }, "Retry"))));
    this.refunds.replaceChildren(h("table", { dataset: { testid: "failed-refunds" } },
      h("thead", {}, h("tr", {}, ...["Order", "Payment", "Amount (¥)", "Attempts", "Last error", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...rows)));
  }

  async retry(p, button) {
    button.disabled = true;
    try {
      const after = await api(`/api/admin/payments/orders/${encodeURIComponent(p.out_trade_no)}/payments/${encodeURIComponent(p.trade_no)}/refund`, { method: "POST" });
      notify(`Refund of ${p.trade_no}: ${after.state}`, after.state === "refunded" ? "info" : "error");
      await this.refresh();
    } catch (error) {
      report(error);
    } finally {
      button.disabled = false;
    }
  }

  async reconcile(button) {
    button.disabled = true;
    try {
      const r = await api("/api/admin/payments/reconciliation", { method: "POST" });
      const lines = r.mismatches.map((m) => h("li", {}, `${m.out_trade_no}: ${m.kind} (here ${m.local_state} ${yuan(m.local_cents)}, there ${m.gateway_status ?? "no trade"}${m.gateway_cents === null ? "" : ` ${yuan(m.gateway_cents)}`})`));
      this.reconciliation.replaceChildren(h("div", { class: "card", dataset: { testid: "reconciliation", clean: String(r.clean) } },
        h("p", {}, r.clean ? `Clean: ${r.checked} orders agree with the gateway.` : `${r.mismatches.length} of ${r.checked} orders disagree:`),
        lines.length ? h("ul", {}, ...lines) : null));
    } catch (error) {
      report(error);
    } finally {
      button.disabled = false;
    }
  }
}
