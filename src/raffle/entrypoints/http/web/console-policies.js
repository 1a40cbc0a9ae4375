// Participation policies per activity (seed 004's 活动参与策略): who may join (a tag, levels),
// at what cost in points, how often they may join and win per period; and the activity's
// per-person caps (a capped win is the fallback, published with the odds). Meeting one policy
// is enough: the first by priority that admits a player applies.

import { api, h, notify } from "/web/api.js";
import { activityPicker, report } from "/web/console-fields.js";

const PERIODS = ["permanent", "day", "week", "month", "year"];

// "3, 4" as [3, 4]; anything not a whole number is sent as typed, for the server to name.
const levels = (text) => text.split(",").map((v) => v.trim()).filter(Boolean).map((v) => (/^\d+$/.test(v) ? Number(v) : v));
const count = (text) => (/^\d+$/.test(text.trim()) ? Number(text) : text);

export class PoliciesView {
  // `onSaved`: the campaign editor reads the campaign again, so that saving the campaign
  // afterwards keeps these policies (they are part of its activities).
  constructor(onSaved = () => {}) {
    this.node = h("div", { class: "policies" });
    this.activityId = null;
    this.onSaved = onSaved;
  }

  async refresh() {
    try {
      const activities = await api("/api/activities");
      if (!activities.length) return this.node.replaceChildren(h("p", { class: "muted" }, "No activity yet."));
      this.activityId ??= activities[0].id;
      const pick = activityPicker("policies-activity", activities, this.activityId, (id) => this.load(id));
      this.body = h("div", {});
      this.node.replaceChildren(h("div", { class: "row toolbar" }, h("label", {}, "Activity", pick)), this.body);
      await this.load(this.activityId);
    } catch (error) {
      report(error);
    }
  }

  async load(activityId) {
    this.activityId = activityId;
    try {
      this.render(await api(`/api/admin/activities/${activityId}/policies`));
    } catch (error) {
      report(error);
    }
  }

  render(doc) {
    this.doc = structuredClone(doc);
    const rows = this.doc.policies.map((p, i) => this.policyRow(p, i));
    this.body.replaceChildren(
      h("fieldset", { class: "policy-list", dataset: { testid: "policies" } },
        h("legend", {}, "Policies (meeting one is enough; none: everyone may join)"),
        ...(rows.length ? rows : [h("p", { class: "muted", dataset: { testid: "no-policies" } }, "No policy: everyone may join.")]),
        h("button", { dataset: { testid: "add-policy" }, onclick: () => this.add() }, "Add policy")),
      this.capsFields(),
      h("div", { class: "row toolbar" }, h("button", { class: "primary", dataset: { testid: "save-policies" }, onclick: (e) => this.save(e.currentTarget) }, "Save")),
    );
  }

  policyRow(p, i) {
    const limit = (key, label) => {
      const value = p[key];
      const amount = h("input", { type: "number", min: 0, value: value?.count ?? "", "aria-label": `${label}: count`, placeholder: "no limit",
        oninput: (e) => { p[key] = e.target.value.trim() === "" ? null : { ...(p[key] ?? { period: "day" }), count: count(e.target.value) }; } });
      const period = h("select", { "aria-label": `${label}: period`, onchange: (e) => { if (p[key]) p[key].period = e.target.value; } },
        ...PERIODS.map((v) => h("option", { value: v, selected: (value?.period ?? "day") === v }, v)));
      return h("label", {}, label, h("span", { class: "row" }, amount, period));
    };
    return h("div", { class: "row policy", dataset: { policy: String(i) } },
      h("label", {}, "Id", h("input", { type: "number", min: 1, value: p.policy_id, "aria-label": "Policy id", oninput: (e) => { p.policy_id = count(e.target.value); } })),
      h("label", {}, "Priority", h("input", { type: "number", min: 0, value: p.priority, "aria-label": "Priority", oninput: (e) => { p.priority = count(e.target.value); } })),
      h("label", {}, "Tag", h("input", { value: p.tag ?? "", placeholder: "everyone", "aria-label": "Tag", oninput: (e) => { p.tag = e.target.value.trim() || null; } })),
      h("label", {}, "Levels", h("input", { value: (p.levels ?? []).join(", "), placeholder: "any", "aria-label": "Levels", oninput: (e) => { p.levels = levels(e.target.value); } })),
      h("label", {}, "Points a draw", h("input", { type: "number", min: 0, value: p.points_cost ?? 0, "aria-label": "Points cost", oninput: (e) => { p.points_cost = count(e.target.value); } })),
      limit("joins", "Joins"),
      limit("wins", "Wins"),
      h("button", { class: "remove", "aria-label": "Remove policy", onclick: () => { this.doc.policies.splice(i, 1); this.render(this.doc); } }, "✕"));
  }

  capsFields() {
    const caps = (this.doc.person_caps ??= { wins: null, once_per_prize: false });
    const amount = h("input", { type: "number", min: 0, value: caps.wins?.count ?? "", placeholder: "no cap", "aria-label": "Wins per person: count",
      oninput: (e) => { caps.wins = e.target.value.trim() === "" ? null : { ...(caps.wins ?? { period: "day" }), count: count(e.target.value) }; } });
    const period = h("select", { "aria-label": "Wins per person: period", onchange: (e) => { if (caps.wins) caps.wins.period = e.target.value; } },
      ...PERIODS.map((v) => h("option", { value: v, selected: (caps.wins?.period ?? "day") === v }, v)));
    const once = h("input", { type: "checkbox", checked: caps.once_per_prize, "aria-label": "Each prize once per person", onchange: (e) => { caps.once_per_prize = e.target.checked; } });
    return h("fieldset", { class: "caps" },
      h("legend", {}, "Per person (a capped win is the fallback; fixed once the activity runs)"),
      h("label", {}, "Wins per person", h("span", { class: "row" }, amount, period)),
      h("label", {}, h("span", { class: "row" }, once, "Each prize at most once")));
  }

  add() {
    const next = Math.max(0, ...this.doc.policies.map((p) => Number(p.policy_id) || 0)) + 1;
    const priority = Math.max(0, ...this.doc.policies.map((p) => Number(p.priority) || 0)) + 10;
    this.doc.policies.push({ policy_id: next, priority, tag: null, levels: [], points_cost: 0, joins: null, wins: null });
    this.render(this.doc);
  }

  async save(button) {
    button.disabled = true;
    try {
      const saved = await api(`/api/admin/activities/${this.activityId}/policies`, { method: "PUT", json: this.doc });
      this.render(saved);
      notify(`Policies of activity ${this.activityId} saved.`, "ok");
      await this.onSaved();
    } catch (error) {
      button.disabled = false;
      report(error);
    }
  }
}
