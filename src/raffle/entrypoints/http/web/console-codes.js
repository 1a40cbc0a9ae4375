// Join codes per activity (seed 004's 参与码): used and unused counts, codes generated from
// the server's CSPRNG or imported (one a line), each batch with its source and remark, and
// the export as CSV (state, bound user and time). Whether an activity requires a code is
// its "Join code required" box in the Campaign tab.
//
// Stable hooks for tests: [data-testid=code-counts] (data-total, data-used, data-unused),
// [data-testid=generate-codes], [data-testid=import-codes], [data-testid=export-codes].

import { api, h, notify } from "/web/api.js";
import { activityPicker, report } from "/web/console-fields.js";

export class CodesView {
  constructor() {
    this.node = h("div", { class: "codes" });
    this.activityId = null;
  }

  async refresh() {
    try {
      const activities = await api("/api/activities");
      if (!activities.length) return this.node.replaceChildren(h("p", { class: "muted" }, "No activity yet."));
      this.activityId ??= activities[0].id;
      const pick = activityPicker("codes-activity", activities, this.activityId, (id) => this.load(id),
        (a) => `${a.id} · ${a.name} (${a.state}${a.join_code_required ? ", code required" : ""})`);
      this.counts = h("p", { dataset: { testid: "code-counts" } });
      this.node.replaceChildren(h("div", { class: "row toolbar" }, h("label", {}, "Activity", pick),
        h("button", { dataset: { testid: "export-codes" }, onclick: () => this.export() }, "Export CSV")),
      this.counts, this.generateForm(), this.importForm());
      await this.load(this.activityId);
    } catch (error) {
      report(error);
    }
  }

  async load(activityId) {
    this.activityId = activityId;
    try {
      const c = await api(`/api/admin/activities/${activityId}/join-codes`);
      Object.assign(this.counts.dataset, { total: c.total, used: c.used, unused: c.unused });
      this.counts.textContent = `${c.total} codes: ${c.used} used, ${c.unused} unused.`;
    } catch (error) {
      report(error);
    }
  }

  labels() {
    return [h("input", { name: "source", required: true, maxlength: 64, placeholder: "source (a batch, a partner)", "aria-label": "Source" }),
      h("input", { name: "remark", maxlength: 255, placeholder: "remark", "aria-label": "Remark" })];
  }

  generateForm() {
    const count = h("input", { name: "count", type: "number", min: 1, max: 100000, value: "100", "aria-label": "How many" });
    const [source, remark] = this.labels();
    return h("form", { class: "row toolbar", dataset: { testid: "generate-codes" }, onsubmit: (event) => {
      event.preventDefault();
      this.send("generate", { count: Number(count.value), source: source.value.trim(), remark: remark.value.trim() },
        (done) => `${done.generated} codes generated (${done.entropy_bits} bits each).`);
    } }, h("label", {}, "Generate", count), source, remark, h("button", { class: "primary", type: "submit" }, "Generate"));
  }

  importForm() {
    const codes = h("textarea", { name: "codes", rows: 4, spellcheck: "false", placeholder: "one code a line", "aria-label": "Codes" });
    const [source, remark] = this.labels();
    return h("form", { class: "row toolbar", dataset: { testid: "import-codes" }, onsubmit: (event) => {
      event.preventDefault();
      const lines = codes.value.split("\n").map((line) => line.trim()).filter(Boolean);
      this.send("import", { codes: lines, source: source.value.trim(), remark: remark.value.trim() },
        (done) => `${done.added} codes imported, ${done.existing} there already.`);
    } }, codes, source, remark, h("button", { class: "primary", type: "submit" }, "Import"));
  }

  async send(action, body, said) {
    try {
      const done = await api(`/api/admin/activities/${this.activityId}/join-codes/${action}`, { method: "POST", json: body });
      notify(said(done), "ok");
      await this.load(this.activityId);
    } catch (error) {
      report(error);
    }
  }

  // The export needs the session's token, which a plain link would not send.
  async export() {
    try {
      const text = await api(`/api/admin/activities/${this.activityId}/join-codes.csv`);
      const link = h("a", { href: URL.createObjectURL(new Blob([text], { type: "text/csv" })), download: `join-codes-${this.activityId}.csv` });
      link.click();
      URL.revokeObjectURL(link.href);
    } catch (error) {
      report(error);
    }
  }
}
