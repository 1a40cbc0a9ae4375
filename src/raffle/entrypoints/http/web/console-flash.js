// The flash sales: each sale with its units left in the fast stock (blank: not loaded) and
// its orders by state (`refused`: the database had no unit left, or the points fell short).
// Sales are created in campaign files or POST /api/admin/flash-sales; the player's page is
// /flash#ID.

import { api, h } from "/web/api.js";
import { report } from "/web/console-fields.js";

const STATES = ["awaiting_payment", "done", "expired", "refused"];

export class FlashView {
  constructor() {
    this.node = h("div", { class: "flash" });
  }

  async refresh() {
    try {
      this.render(await api("/api/admin/flash-sales"));
    } catch (error) {
      report(error);
    }
  }

  render(sales) {
    const rows = sales.map((s) => h("tr", { dataset: { sale: String(s.id) } },
      h("td", {}, h("a", { href: `/flash#${s.id}` }, String(s.id))), h("td", {}, s.name),
      h("td", { class: "num" }, `${s.price} ${s.currency}`), h("td", {}, s.starts_at), h("td", {}, s.ends_at),
      h("td", { class: "num" }, String(s.stock)), h("td", { class: "num", dataset: { left: "" } }, s.left === null ? "" : String(s.left)),
      ...STATES.map((state) => h("td", { class: "num", dataset: { state } }, String(s.orders[state] ?? 0)))));
    this.node.replaceChildren(
      h("table", { id: "flash-sales" },
        h("thead", {}, h("tr", {}, ...["Sale", "Name", "Price", "Starts", "Ends", "Stock", "Left",
          "Awaiting payment", "Done", "Expired", "Refused"].map((title) => h("th", {}, title)))),
        h("tbody", {}, ...rows)),
      h("button", { id: "flash-refresh", onclick: () => this.refresh() }, "Refresh"),
    );
  }
}
