// The audit log's chains (operators' actions, payments, grants): each chain's head, to be
// written down somewhere this system cannot change; `raffle audit verify` walks each chain
// to it and names the first entry that does not hold.

import { api, h } from "/web/api.js";
import { report } from "/web/console-fields.js";

export class AuditView {
  constructor() {
    this.node = h("div", { class: "audit" });
  }

  async refresh() {
    try {
      this.render(await api("/api/admin/audit/heads"));
    } catch (error) {
      report(error);
    }
  }

  render(heads) {
    const rows = heads.map((c) => h("tr", { dataset: { chain: c.chain } },
      h("td", {}, c.chain), h("td", { class: "num" }, String(c.seq)), h("td", {}, h("code", {}, c.hash))));
    this.node.replaceChildren(
      h("p", {}, "Each chain's last entry. Write the hashes down elsewhere: a later change to any entry up to them shows in ", h("code", {}, "raffle audit verify"), "."),
      h("table", { id: "audit-heads" },
        h("thead", {}, h("tr", {}, h("th", {}, "Chain"), h("th", {}, "Entries"), h("th", {}, "Head hash (SHA-256)"))),
        h("tbody", {}, ...rows)),
      h("button", { id: "audit-refresh", onclick: () => this.refresh() }, "Refresh"),
    );
  }
}
