// Buying content (seed 000 支付流程): an order for it, its QR code to scan (and a link to the
// pay page itself: in the demo, the simulator's), the order followed until it is paid, then
// the content opened; and my orders with their states.
//
// Stable hooks for tests: [data-testid=checkout] (data-order, data-state) with
// [data-testid=qr] (the SVG), [data-testid=pay-link] and [data-testid=cancel];
// [data-testid=my-orders] items (data-order, data-state).
import { api, h } from "/web/api.js";
import { price } from "/web/content.js";
import { t } from "/web/i18n.js";

const POLL_MS = 1000;

export class Checkout {
  // `opened(contentId)`: show the content, once paid; `back()`: the shelf again.
  constructor(onError, opened, back) {
    Object.assign(this, { onError, opened, back, slot: null, following: 0 });
  }

  // The content page's Buy button: the slot is the shelf's.
  async buy(page, slot) {
    this.slot = slot;
    const order = await api(page.buy, { method: "POST", json: { content_id: page.id } });
    const qr = await api(`/api/payments/orders/${order.out_trade_no}/qr`);
    this.show(order, qr);
    this.follow(order);
  }

  stop() {
    this.following++;
  }

  show(order, qr) {
    const picture = h("div", { class: "qr", "data-testid": "qr" });
    picture.innerHTML = qr.svg; // drawn by the server from the gateway's link: paths only
    this.status = h("p", { "data-testid": "pay-status" }, t("pay.waiting"));
    this.node = h("article", { class: "checkout", "data-testid": "checkout", "data-order": order.out_trade_no, "data-state": order.state },
      h("h3", {}, order.subject), h("p", {}, t("pay.amount"), " ", h("strong", {}, price(order.amount_cents))),
      h("p", { class: "muted" }, t("pay.scan")), picture,
      h("p", {}, h("a", { href: qr.qr_code, target: "_blank", rel: "noopener", "data-testid": "pay-link" }, t("pay.open_link"))),
      this.status,
      h("div", { class: "row" },
        h("button", { class: "ghost", "data-testid": "cancel", onclick: () => this.cancel(order).catch(this.onError) }, t("pay.cancel")),
        h("button", { class: "ghost", onclick: () => { this.stop(); this.back(); } }, t("content.back"))));
    this.slot.replaceChildren(this.node);
  }

  async follow(order) {
    const run = ++this.following;
    while (run === this.following) {
      await new Promise((done) => setTimeout(done, POLL_MS));
      if (run !== this.following) return;
      let now;
      try {
        now = await api(`/api/payments/orders/${order.out_trade_no}`);
      } catch (error) {
        this.onError(error);
        continue;
      }
      this.node.dataset.state = now.state;
      if (now.state === "paid") {
        this.stop();
        await this.opened(now.content_id);
        return;
      }
      if (now.state !== "created" && now.state !== "paying") {
        this.stop();
        this.status.textContent = t(`order_state.${now.state}`);
        return;
      }
    }
  }

  async cancel(order) {
    this.stop();
    const now = await api(`/api/payments/orders/${order.out_trade_no}/cancel`, { method: "POST" });
    this.node.dataset.state = now.state;
    this.status.textContent = t(`order_state.${now.state}`);
  }

  // "My orders", newest first, into `slot`.
  async orders(slot) {
    let mine;
    try {
      mine = await api("/api/payments/orders?limit=20");
    } catch (error) {
      if (error.code !== "payments_unavailable") throw error;
      slot.replaceChildren(h("p", { class: "muted" }, t("problem.payments_unavailable")));
      return;
    }
    slot.replaceChildren(mine.length
      ? h("ul", { class: "my-orders", "data-testid": "my-orders" }, ...mine.map((o) => h("li", { "data-order": o.out_trade_no, "data-state": o.state },
        h("span", {}, o.subject), " ", h("span", { class: "muted" }, price(o.amount_cents)), " ",
        h("span", { class: "badge" }, t(`order_state.${o.state}`)))))
      : h("p", { class: "muted" }, t("pay.none")));
  }
}
