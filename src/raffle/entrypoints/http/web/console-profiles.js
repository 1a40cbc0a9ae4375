// Players' profiles: search them (user id prefix, phone, level, region), view and edit one,
// lock or unlock its account, and import a CSV or JSON Lines file with its report by line.

import { api, h, notify } from "/web/api.js";
import { report } from "/web/console-fields.js";
import { localTime } from "/web/times.js";

const PAGE = 50;
const TEXT_FIELDS = [["phone", "Phone"], ["region", "Region"], ["channel", "Channel"], ["sn", "Device serial (SN)"]];
const IMPORT_TYPES = { csv: "text/csv", jsonl: "application/x-ndjson", ndjson: "application/x-ndjson" };

export class ProfilesView {
  constructor() {
    this.query = {};
    this.rows = h("tbody", { dataset: { testid: "profile-rows" } });
    this.more = h("button", { hidden: true, dataset: { testid: "more" }, onclick: () => this.search(this.next) }, "More");
    this.detail = h("div", { class: "profile-detail", dataset: { testid: "profile-detail" } });
    this.imported = h("div", { dataset: { testid: "import-report" } });
    this.node = h("div", { class: "profiles" },
      this.searchForm(),
      h("div", { class: "scroll" }, h("table", { dataset: { testid: "profiles" } },
        h("thead", {}, h("tr", {}, ...["User", "Phone", "Level", "Gender", "Born", "Region", "Account", ""].map((t) => h("th", {}, t)))),
        this.rows)),
      this.more,
      this.detail,
      this.importForm(),
      this.imported);
  }

  searchForm() {
    const inputs = {
      user: h("input", { name: "user", maxlength: 32, placeholder: "user id starts with", "aria-label": "User id prefix" }),
      phone: h("input", { name: "phone", maxlength: 32, placeholder: "phone", "aria-label": "Phone" }),
      level: h("input", { name: "level", type: "number", min: 0, max: 999, placeholder: "level", "aria-label": "Level" }),
      region: h("input", { name: "region", maxlength: 64, placeholder: "region", "aria-label": "Region" }),
    };
    return h("form", { class: "row toolbar", dataset: { testid: "profile-search" }, onsubmit: (event) => {
      event.preventDefault();
      this.query = Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value.trim()]).filter(([, v]) => v));
      this.search();
    } }, ...Object.values(inputs), h("button", { class: "primary", type: "submit" }, "Search"));
  }

  async refresh() {
    await this.search();
  }

  async search(after) {
    const params = new URLSearchParams({ ...this.query, limit: String(PAGE) });
    if (after) params.set("after", after);
    try {
      const page = await api(`/api/admin/profiles?${params}`);
      if (!after) this.rows.replaceChildren();
      this.rows.append(...page.items.map((p) => this.row(p)));
      if (!this.rows.children.length) this.rows.append(h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No profile matches.")));
      this.next = page.next;
      this.more.hidden = !page.next;
    } catch (error) {
      report(error);
    }
  }

  row(p) {
    return h("tr", { dataset: { user: p.user_id } },
      h("td", {}, p.user_id), h("td", {}, p.phone ?? ""), h("td", { class: "num" }, String(p.level)),
      h("td", {}, p.gender ?? ""), h("td", {}, p.birth_date ?? ""), h("td", {}, p.region ?? ""),
      h("td", { dataset: { testid: "status" } }, p.status ?? "not signed up"),
      h("td", {}, h("button", { dataset: { testid: "open" }, onclick: () => this.open(p.user_id) }, "Open")));
  }

  async open(userId) {
    try {
      this.show(await api(`/api/admin/profiles/${encodeURIComponent(userId)}`));
    } catch (error) {
      report(error);
    }
  }

  show(p) {
    const inputs = Object.fromEntries(TEXT_FIELDS.map(([k]) => [k, h("input", { name: k, value: p[k] ?? "", maxlength: k === "phone" ? 32 : 64 })]));
    inputs.level = h("input", { name: "level", type: "number", min: 0, max: 999, value: String(p.level) });
    inputs.birth_date = h("input", { name: "birth_date", type: "date", value: p.birth_date ?? "" });
    inputs.gender = h("select", { name: "gender" }, ...[["", "unknown"], ["f", "female"], ["m", "male"], ["x", "other"]]
      .map(([v, t]) => h("option", { value: v, selected: (p.gender ?? "") === v }, t)));
    const attributes = h("textarea", { name: "attributes", rows: 4, spellcheck: "false" }, JSON.stringify(p.attributes, null, 1));
    const labelled = (text, input) => h("label", {}, text, input);
    // Locks and unlocks keep the operator, the time and this reason (shown below).
    const reason = p.status === null ? null : h("input", { name: "lock-reason", maxlength: 255,
      placeholder: "reason, kept with the change", "aria-label": "Reason", dataset: { testid: "lock-reason" } });
    const lock = p.status === null ? null : h("button", {
      dataset: { testid: p.status === "locked" ? "unlock" : "lock" },
      onclick: () => this.lock(p.user_id, p.status === "locked" ? "unlock" : "lock", reason.value.trim()),
    }, p.status === "locked" ? "Unlock account" : "Lock account");
    const history = h("ul", { class: "muted", dataset: { testid: "lock-history" } });
    const save = h("button", { class: "primary", dataset: { testid: "save-profile" }, onclick: async () => {
      let attrs;
      try {
        attrs = JSON.parse(attributes.value || "{}");
      } catch {
        return notify("Attributes: not a JSON object.", "error");
      }
      const body = { level: Number(inputs.level.value || 0), attributes: attrs };
      for (const key of ["phone", "region", "channel", "sn", "birth_date", "gender"]) {
        if (inputs[key].value.trim()) body[key] = inputs[key].value.trim();
      }
      try {
        const saved = await api(`/api/admin/profiles/${encodeURIComponent(p.user_id)}`, { method: "PUT", json: body });
        notify(`Profile of ${p.user_id} saved.`, "ok");
        this.show(saved);
        await this.search();
      } catch (error) {
        report(error);
      }
    } }, "Save");
    const updated = p.updated_at ? `updated ${localTime(p.updated_at)}` : "nothing stored yet";
    this.detail.replaceChildren(h("section", { class: "card" },
      h("h3", {}, `${p.user_id} `, h("small", { class: "muted" }, `${p.status ?? "not signed up"} · ${updated}`)),
      h("div", { class: "row" }, ...TEXT_FIELDS.map(([k, t]) => labelled(t, inputs[k]))),
      h("div", { class: "row" }, labelled("Level", inputs.level), labelled("Gender", inputs.gender), labelled("Born", inputs.birth_date)),
      labelled("Attributes (JSON: text, numbers, true/false, dates as YYYY-MM-DD)", attributes),
      h("div", { class: "row toolbar" }, save, reason, lock), history));
    if (p.status !== null) this.history(p.user_id, history);
  }

  async history(userId, list) {
    try {
      const account = await api(`/api/admin/users/${encodeURIComponent(userId)}`);
      list.replaceChildren(...account.changes.map((c) => h("li", {},
        `${c.status} by ${c.by ?? "the command line"}, ${localTime(c.at)}${c.reason ? `: ${c.reason}` : ""}`)));
    } catch (error) {
      report(error);
    }
  }

  async lock(userId, action, reason = "") {
    try {
      const path = `/api/admin/users/${encodeURIComponent(userId)}/${action}`;
      const account = await api(path, { method: "POST", json: { reason } });
      notify(`${userId}: ${account.status}.`, "ok");
      await this.open(userId);
      await this.search();
    } catch (error) {
      report(error);
    }
  }

  importForm() {
    const file = h("input", { type: "file", accept: ".csv,.jsonl,.ndjson", dataset: { testid: "profile-file" } });
    return h("form", { class: "row toolbar", onsubmit: async (event) => {
      event.preventDefault();
      const chosen = file.files?.[0];
      if (!chosen) return notify("Choose a .csv or .jsonl file first.", "error");
      const type = IMPORT_TYPES[chosen.name.split(".").pop().toLowerCase()];
      if (!type) return notify("A profile file ends in .csv, .jsonl or .ndjson.", "error");
      try {
        const done = await api("/api/admin/profiles/import", { method: "POST", text: await chosen.text(), type });
        this.showReport(done);
        await this.search();
      } catch (error) {
        report(error);
      }
    } }, h("label", { class: "upload" }, "Import profiles (CSV or JSON Lines)", file), h("button", { type: "submit" }, "Import"));
  }

  showReport(done) {
    const summary = `${done.rows} rows: ${done.created} created, ${done.updated} updated, ${done.unchanged} unchanged, ${done.refused} refused.`;
    notify(summary, done.refused ? "error" : "ok");
    const problems = done.problems.map((p) => h("li", {}, `line ${p.line}: ${p.code}${p.field ? ` (${p.field})` : ""}: ${p.message}`));
    this.imported.replaceChildren(h("p", { dataset: { testid: "import-summary" } }, summary), h("ul", { class: "problems" }, ...problems));
  }
}
