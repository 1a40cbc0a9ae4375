// Deny lists (seed 004 黑名单): users, phones, addresses or CIDR ranges and device serials that
// may not play, by hand or put there by the automatic blocking rules (with their evidence);
// operators add, filter, page and lift entries, and keep the rules.

import { api, h, notify } from "/web/api.js";
import { report } from "/web/console-fields.js";
import { localTime, localZone } from "/web/times.js";

const KINDS = { user: "User id", phone: "Phone", ip: "IP address or CIDR range", sn: "Device serial" };
const EVENTS = { refused_draw: "refused draws", failed_login: "failed logins" };
const PAGE = 50;

export class DenyView {
  constructor() {
    this.node = h("div", { class: "deny" });
    this.filters = this.filterForm();
    this.list = h("div", { class: "scroll" });
    this.more = h("button", { dataset: { testid: "deny-more" }, hidden: true, onclick: () => this.load(true) }, "More");
    this.rules = h("div", { class: "scroll" });
    this.node.append(
      h("h3", {}, "Deny an entry"), this.entryForm(),
      h("h3", {}, `Entries (${localZone()} time)`), this.filters.node, this.list, this.more,
      h("h3", {}, "Automatic blocking rules"), this.ruleForm(), this.rules,
    );
    this.entries = [];
    this.next = null;
  }

  async refresh() {
    await Promise.all([this.load(false), this.loadRules()]);
  }

  async load(more) {
    const query = new URLSearchParams({ limit: String(PAGE), ...this.filters.values() });
    if (more && this.next) query.set("after", this.next);
    try {
      const page = await api(`/api/admin/deny-list?${query}`);
      this.entries = more ? [...this.entries, ...page.entries] : page.entries;
      this.next = page.next;
      this.more.hidden = !page.next;
      this.renderEntries();
    } catch (error) {
      report(error);
    }
  }

  renderEntries() {
    if (!this.entries.length) {
      this.list.replaceChildren(h("p", { class: "muted", dataset: { testid: "no-entries" } }, "No entry."));
      return;
    }
    const rows = this.entries.map((e) => h("tr", { dataset: { entry: String(e.id) } },
      h("td", {}, KINDS[e.kind]),
      h("td", {}, h("code", {}, e.value)),
      h("td", {}, e.reason, e.evidence ? evidence(e.evidence) : ""),
      h("td", {}, e.added_by, h("br"), h("small", { class: "muted" }, localTime(e.added_at))),
      h("td", {}, e.expires_at ? localTime(e.expires_at) : "never"),
      h("td", {}, h("button", { class: "danger", dataset: { testid: "lift" }, onclick: (ev) => this.lift(e, ev.currentTarget) }, "Lift"))));
    this.list.replaceChildren(h("table", { dataset: { testid: "deny-entries" } },
      h("thead", {}, h("tr", {}, ...["Kind", "Value", "Reason", "Added by", "Expires", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...rows)));
  }

  async lift(entry, button) {
    button.disabled = true;
    try {
      await api(`/api/admin/deny-list/${entry.id}`, { method: "DELETE" });
      notify(`Lifted: ${entry.value}.`, "ok");
      await this.load(false);
    } catch (error) {
      button.disabled = false;
      report(error);
    }
  }

  entryForm() {
    const kind = h("select", { name: "kind", "aria-label": "Kind" },
      ...Object.entries(KINDS).map(([value, label]) => h("option", { value }, label)));
    const value = h("input", { name: "value", maxlength: 64, required: true, placeholder: "203.0.113.0/24", "aria-label": "Value" });
    const reason = h("input", { name: "reason", maxlength: 200, required: true, placeholder: "Reason", "aria-label": "Reason" });
    const expires = h("input", { name: "expires_at", type: "datetime-local", "aria-label": `Expires (${localZone()}), empty: never` });
    const form = h("form", { class: "row", dataset: { testid: "deny-form" } }, kind, value, reason, expires,
      h("button", { type: "submit" }, "Deny"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = { kind: kind.value, value: value.value, reason: reason.value };
      if (expires.value) body.expires_at = new Date(expires.value).toISOString();
      try {
        await api("/api/admin/deny-list", { method: "POST", json: body });
        notify(`Denied: ${value.value}.`, "ok");
        value.value = reason.value = expires.value = "";
        await this.load(false);
      } catch (error) {
        report(error);
      }
    });
    return form;
  }

  filterForm() {
    const kind = h("select", { "aria-label": "Filter by kind" }, h("option", { value: "" }, "Every kind"),
      ...Object.entries(KINDS).map(([value, label]) => h("option", { value }, label)));
    const value = h("input", { maxlength: 64, placeholder: "Value starts with", "aria-label": "Value starts with" });
    const automatic = h("select", { "aria-label": "Added" }, h("option", { value: "" }, "By hand or automatic"),
      h("option", { value: "true" }, "Automatic"), h("option", { value: "false" }, "By hand"));
    const inForce = h("input", { type: "checkbox", "aria-label": "Only in force" });
    const node = h("form", { class: "row" }, kind, value, automatic, h("label", {}, inForce, " only in force"),
      h("button", { type: "submit" }, "Filter"));
    node.addEventListener("submit", (event) => { event.preventDefault(); this.load(false); });
    const values = () => {
      const found = {};
      if (kind.value) found.kind = kind.value;
      if (value.value) found.value = value.value;
      if (automatic.value) found.automatic = automatic.value;
      if (inForce.checked) found.in_force = "true";
      return found;
    };
    return { node, values };
  }

  async loadRules() {
    try {
      const rules = await api("/api/admin/block-rules");
      if (!rules.length) {
        this.rules.replaceChildren(h("p", { class: "muted", dataset: { testid: "no-rules" } }, "No rule."));
        return;
      }
      const rows = rules.map((r) => h("tr", { dataset: { rule: String(r.id) } },
        h("td", {}, `More than ${r.threshold} ${EVENTS[r.event]} of one ${r.subject === "ip" ? "address" : "user"} in ${r.window_minutes} min`),
        h("td", {}, `denied for ${r.block_minutes} min`),
        h("td", {}, r.created_by),
        h("td", {}, h("button", { class: "danger", onclick: (e) => this.removeRule(r, e.currentTarget) }, "Delete"))));
      this.rules.replaceChildren(h("table", { dataset: { testid: "block-rules" } },
        h("thead", {}, h("tr", {}, ...["Rule", "Then", "By", ""].map((t) => h("th", {}, t)))),
        h("tbody", {}, ...rows)));
    } catch (error) {
      report(error);
    }
  }

  async removeRule(rule, button) {
    button.disabled = true;
    try {
      await api(`/api/admin/block-rules/${rule.id}`, { method: "DELETE" });
      await this.loadRules();
    } catch (error) {
      button.disabled = false;
      report(error);
    }
  }

  ruleForm() {
    const event = h("select", { name: "event", "aria-label": "Event" },
      ...Object.entries(EVENTS).map(([value, label]) => h("option", { value }, label)));
    const subject = h("select", { name: "subject", "aria-label": "Of one" },
      h("option", { value: "user" }, "user"), h("option", { value: "ip" }, "address"));
    const number = (name, label, value) => h("input", { name, type: "number", min: 1, value, "aria-label": label });
    const threshold = number("threshold", "More than", 30);
    const windowMinutes = number("window_minutes", "In minutes", 1);
    const blockMinutes = number("block_minutes", "Deny for minutes", 60);
    const form = h("form", { class: "row", dataset: { testid: "rule-form" } },
      "More than", threshold, event, "of one", subject, "in", windowMinutes, "min → deny for", blockMinutes, "min",
      h("button", { type: "submit" }, "Add rule"));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const body = { event: event.value, subject: subject.value, threshold: Number(threshold.value),
        window_minutes: Number(windowMinutes.value), block_minutes: Number(blockMinutes.value) };
      try {
        await api("/api/admin/block-rules", { method: "POST", json: body });
        await this.loadRules();
      } catch (error) {
        report(error);
      }
    });
    return form;
  }
}

// An automatic entry's evidence: what its rule counted, and when.
function evidence(e) {
  return h("small", { class: "muted", dataset: { testid: "evidence" } }, h("br"),
    `${e.count} ${EVENTS[e.event] ?? e.event} in ${e.window_minutes} min (rule ${e.rule_id}), `
      + `${localTime(e.first_at)} – ${localTime(e.last_at)}`);
}
