// The campaign editor: the whole stored configuration as one campaign document (the format
// of campaign files), edited in forms and stored with POST /api/admin/campaigns. The server
// checks it as a whole; its problems come back with paths and are shown next to the fields.

import { api, h, notify, Problem } from "/web/api.js";
import { choice, clearProblems, field, integer, nextId, optionalText, report, showProblems } from "/web/console-fields.js";
import { claimFields } from "/web/console-claims.js";
import { prizeCard } from "/web/console-prize-card.js";
import { workflowButtons } from "/web/console-workflow.js";
import { inZone, knownZone } from "/web/times.js";

const KINDS = ["random_points", "points", "chances", "coupon", "content", "physical", "thanks"];
const SECTIONS = ["awards", "strategies", "packs", "activities", "skus", "rebates"];

export class Editor {
  constructor(onChange) {
    this.node = h("div", { class: "editor" });
    this.onChange = onChange; // activities or their states changed
    this.doc = {};
    this.stored = new Map(); // activity id -> state, as stored
    this.loaded = new WeakSet(); // items as loaded: saving never deletes, so no removing them
  }

  async reload() {
    const doc = await api("/api/admin/campaigns?format=json");
    for (const section of SECTIONS) doc[section] ??= [];
    doc.code_pools ??= {};
    // Content is edited in its own tab: a campaign saved from an older reading would put
    // back the text it had then.
    delete doc.content;
    this.doc = doc;
    this.stored = new Map(doc.activities.map((a) => [a.id, a.state]));
    this.loaded = new WeakSet(["awards", "strategies", "packs", "activities", "skus"].flatMap((s) => doc[s]));
    this.render();
    this.onChange();
  }

  activities() {
    return this.doc.activities.filter((a) => this.stored.has(a.id));
  }

  render() {
    const d = this.doc;
    this.node.replaceChildren(
      h("div", { class: "row toolbar" },
        h("button", { class: "primary", id: "save", onclick: () => this.save() }, "Save campaign"),
        h("button", { id: "revert", onclick: () => this.reload().catch(report) }, "Discard changes")),
      h("p", { class: "muted" }, "Edits stay on this page until saved; the campaign is stored whole, all or nothing."),
      section("Awards", "awards", d.awards.map((a, i) => this.award(a, i)),
        button("Add award", "add-award", () => this.add("awards", { id: nextId(d.awards, "id", 101), kind: "points", title: "", config: "" }))),
      section("Strategies", "strategies", d.strategies.map((s, i) => this.strategy(s, i)),
        button("Add strategy", "add-strategy", () => this.add("strategies", this.newStrategy()))),
      section("Quota packs", "packs", d.packs.map((p, i) => this.pack(p, i)),
        button("Add pack", "add-pack", () => this.add("packs", { id: nextId(d.packs, "id", 11), total: 10, day: 3, month: 30 }))),
      section("Activities", "activities", d.activities.map((a, i) => this.activity(a, i)),
        button("Add activity", "add-activity", () => this.add("activities", this.newActivity()))),
      h("p", { class: "muted" }, `${d.rebates.length} rebate rules and ${Object.keys(d.code_pools).length} code pools are kept as they are (edit them in the campaign file).`),
      h("div", { class: "row toolbar" }, h("button", { class: "primary", onclick: () => this.save() }, "Save campaign")),
    );
  }

  add(section, item) {
    this.doc[section].push(item);
    this.render();
    this.node.querySelector(`[data-at="${section}.${this.doc[section].length - 1}"] input`)?.focus();
  }

  // A remove action for items not stored yet; null for stored ones.
  remover(section, index) {
    if (this.loaded.has(this.doc[section][index])) return null;
    return () => {
      this.doc[section].splice(index, 1);
      this.render();
    };
  }

  award(a, i) {
    const at = `awards.${i}`;
    return item(at, `Award ${a.id ?? ""}`, this.remover("awards", i),
      h("div", { class: "row" },
        field("Id", `${at}.id`, a.id, (v) => (a.id = v), this.idOptions(a)),
        choice("Kind", `${at}.kind`, a.kind, (v) => (a.kind = v), () => KINDS.map((k) => [k, k]), { read: String }),
        field("Title", `${at}.title`, a.title, (v) => (a.title = v)),
        field("Config", `${at}.config`, a.config, (v) => (a.config = v ?? ""), { hint: "points, range, SKU, pool…" })));
  }

  strategy(s, i) {
    const at = `strategies.${i}`;
    const fallback = typeof s.fallback === "object" && s.fallback ? s.fallback : { award: s.fallback };
    const setFallback = () => (s.fallback = fallback.points ? { award: fallback.award, points: fallback.points } : fallback.award);
    s.rules ??= {};
    const rule = (name, v) => (v === undefined ? delete s.rules[name] : (s.rules[name] = v));
    return item(at, `Strategy ${s.id ?? ""}`, this.remover("strategies", i),
      h("div", { class: "row" },
        field("Id", `${at}.id`, s.id, (v) => (s.id = v), this.idOptions(s)),
        field("Description", `${at}.description`, s.description, (v) => (s.description = v))),
      h("div", { class: "row" },
        choice("Fallback award", `${at}.fallback`, fallback.award, (v) => { fallback.award = v; setFallback(); }, () => this.awardChoices()),
        field("Fallback points", `${at}.fallback.points`, fallback.points, (v) => { fallback.points = v; setFallback(); }, { read: optionalText, hint: "low,high" }),
        choice("When a prize runs out", `${at}.exhaustion`, s.exhaustion ?? "fallback", (v) => (s.exhaustion = v),
          () => [["fallback", "give the fallback"], ["redistribute", "redistribute its odds"]], { read: String })),
      h("div", { class: "row" },
        field("Listed users (published as their number)", `${at}.rules.listed`, s.rules.listed, (v) => rule("listed", v), { read: optionalText, hint: "100:user001,user002" }),
        field("Weight rule", `${at}.rules.weight`, s.rules.weight, (v) => rule("weight", v), { read: optionalText, hint: "60:102,103 200:106" }),
        field("Guarantees (published)", `${at}.rules.guarantee`, s.rules.guarantee, (v) => rule("guarantee", v), { read: optionalText, hint: "1:win 10:102,103" })),
      h("fieldset", { class: "prizes", dataset: { at: `${at}.prizes` } },
        h("legend", {}, "Prizes (rates are exact decimals; blank stock: unlimited)"),
        ...s.prizes.map((p, j) => this.prize(s, p, `${at}.prizes.${j}`, j)),
        button("Add prize", `add-prize-${i}`, () => {
          s.prizes.push({ award: this.doc.awards[0]?.id, rate: "0.1" });
          this.render();
        })));
  }

  prize(s, p, at, j) {
    p.rules ??= {};
    return h("div", { class: "row prize", dataset: { at } },
      choice("Award", `${at}.award`, p.award, (v) => (p.award = v), () => this.awardChoices()),
      field("Rate", `${at}.rate`, p.rate, (v) => (p.rate = v), { hint: "0.0001" }),
      field("Stock", `${at}.stock`, p.stock, (v) => (p.stock = v), { type: "number", read: integer, hint: "unlimited" }),
      field("Warn at stock left", `${at}.warning_surplus`, p.warning_surplus, (v) => (v === undefined ? delete p.warning_surplus : (p.warning_surplus = v)), { type: "number", read: integer, hint: "no warning" }),
      field("Lock after draws", `${at}.rules.lock`, p.rules.lock, (v) => (v === undefined ? delete p.rules.lock : (p.rules.lock = v)), { type: "number", read: optionalText }),
      removeButton(`Remove prize ${j + 1}`, () => { s.prizes.splice(j, 1); this.render(); }),
      claimFields(p, at, () => this.render()),
      prizeCard(p, at));
  }

  pack(p, i) {
    const at = `packs.${i}`;
    return item(at, `Pack ${p.id ?? ""}`, this.remover("packs", i),
      h("div", { class: "row" },
        field("Id", `${at}.id`, p.id, (v) => (p.id = v), this.idOptions(p)),
        field("Total", `${at}.total`, p.total, (v) => (p.total = v), { type: "number", read: integer }),
        field("Per day", `${at}.day`, p.day, (v) => (p.day = v), { type: "number", read: integer }),
        field("Per month", `${at}.month`, p.month, (v) => (p.month = v), { type: "number", read: integer })));
  }

  activity(a, i) {
    const at = `activities.${i}`;
    const state = this.stored.get(a.id);
    const setId = (v) => {
      for (const sku of this.doc.skus) if (sku.activity === a.id) sku.activity = v; // its SKUs follow
      a.id = v;
    };
    return item(at, `Activity ${a.id ?? ""}`, this.remover("activities", i),
      h("div", { class: "row state-row" },
        h("span", {}, "State: ", h("span", { class: `badge ${badge(state)}`, dataset: { testid: `state-${a.id}` } }, state ?? "new: save to store it")),
        ...(state ? workflowButtons(a, (updated) => this.moved(a, updated)) : [])),
      h("div", { class: "row" },
        field("Id", `${at}.id`, a.id, setId, this.idOptions(a)),
        field("Name", `${at}.name`, a.name, (v) => (a.name = v)),
        choice("Strategy", `${at}.strategy`, a.strategy, (v) => (a.strategy = v), () => this.doc.strategies.map((s) => [s.id, `${s.id} ${s.description ?? ""}`]))),
      field("Description", `${at}.description`, a.description, (v) => (a.description = v), { wide: true }),
      h("div", { class: "row" },
        ...timeFields(a, at),
        choice("Welcome pack", `${at}.welcome_pack`, a.welcome_pack, (v) => (a.welcome_pack = v), () => this.packChoices(), { optional: "none" })),
      capsFields(a, at),
      scheduleFields(a, at),
      this.skus(a));
  }

  skus(a) {
    const rows = this.doc.skus.map((sku, k) => [sku, k]).filter(([sku]) => sku.activity === a.id);
    return h("fieldset", { class: "skus" },
      h("legend", {}, "SKUs: chances sold for points"),
      ...rows.map(([sku, k]) => {
        const at = `skus.${k}`;
        return h("div", { class: "row", dataset: { at } },
          field("SKU", `${at}.sku`, sku.sku, (v) => (sku.sku = v), this.idOptions(sku)),
          choice("Pack", `${at}.pack`, sku.pack, (v) => (sku.pack = v), () => this.packChoices()),
          field("Stock", `${at}.stock`, sku.stock, (v) => (sku.stock = v), { type: "number", read: integer }),
          field("Price (points)", `${at}.price_points`, sku.price_points, (v) => (sku.price_points = v), { type: "number", read: integer }),
          removeButton(`Remove SKU ${sku.sku}`, this.remover("skus", k)));
      }),
      button("Add SKU", `add-sku-${a.id}`, () => {
        this.doc.skus.push({ sku: nextId(this.doc.skus, "sku", 9001), activity: a.id, pack: this.doc.packs[0]?.id, stock: 1000, price_points: 100 });
        this.render();
      }));
  }

  moved(activity, state) {
    activity.state = state;
    this.stored.set(activity.id, state);
    this.render();
    this.onChange();
  }

  // Ids of stored items are fixed: another id would store a new item beside the old one.
  idOptions(item) {
    return { type: "number", read: integer, readonly: this.loaded.has(item) };
  }

  awardChoices() {
    return this.doc.awards.map((a) => [a.id, `${a.id} ${a.title ?? ""}`]);
  }

  packChoices() {
    return this.doc.packs.map((p) => [p.id, `${p.id}: ${p.total} total, ${p.day}/day`]);
  }

  newStrategy() {
    const award = this.doc.awards[0]?.id;
    return { id: nextId(this.doc.strategies, "id", 1001), description: "", exhaustion: "fallback", fallback: award, rules: {}, prizes: [] };
  }

  newActivity() {
    const now = new Date();
    now.setUTCSeconds(0, 0);
    const end = new Date(now.getTime() + 30 * 86400_000);
    const iso = (d) => d.toISOString().replace(".000Z", "Z");
    return {
      id: nextId(this.doc.activities, "id", 100001), name: "", description: "",
      strategy: this.doc.strategies[0]?.id, begin_at: iso(now), end_at: iso(end),
      time_zone: "Asia/Shanghai", state: "edit", welcome_pack: this.doc.packs[0]?.id,
    };
  }

  async save() {
    clearProblems(this.node);
    try {
      const loaded = await api("/api/admin/campaigns", { method: "POST", text: JSON.stringify(this.doc) });
      await this.reload();
      notify(`Saved: ${loaded.awards} awards, ${loaded.strategies} strategies, ${loaded.activities} activities, ${loaded.skus} SKUs.`, "ok");
    } catch (error) {
      this.refused(error);
    }
  }

  refused(error) {
    if (!(error instanceof Problem)) return report(error);
    let problems = error.errors;
    if (error.code === "odds_frozen") problems = [{ at: this.frozenAt(error.detail), message: error.detail }];
    const left = showProblems(this.node, problems);
    const count = problems.length;
    if (count) notify(`Not saved: ${count} problem${count > 1 ? "s" : ""}${left.length ? ": " + left.map((p) => `${p.at ? p.at + ": " : ""}${p.message}`).join("; ") : ", shown next to the fields."}`, "error");
    else report(error);
  }

  // "strategy 1001 is published by running activity …" / "activity 5 is running: …"
  frozenAt(detail) {
    const strategy = /^strategy (\d+)/.exec(detail);
    if (strategy) return `strategies.${this.doc.strategies.findIndex((s) => String(s.id) === strategy[1])}`;
    const activity = /^activity (\d+)/.exec(detail);
    if (activity) return `activities.${this.doc.activities.findIndex((a) => String(a.id) === activity[1])}.strategy`;
    return "";
  }
}

// Begins and Ends shown in the activity's time zone, named in their labels, and shown again in
// a zone typed in (the instants stay; what was typed is kept until the server checks it).
function timeFields(a, at) {
  const label = (name) => `${name} (${a.time_zone || "zone?"})`;
  const times = [["Begins", "begin_at"], ["Ends", "end_at"]].map(([name, key]) => {
    const node = field(label(name), `${at}.${key}`, inZone(a[key], a.time_zone), (v) => (a[key] = v),
      { hint: "2026-11-11T00:00:00+08:00" });
    return { name, key, node };
  });
  const rezone = (zone) => {
    a.time_zone = zone;
    if (!knownZone(zone)) return; // being typed: shown in the last zone known until then
    for (const { name, key, node } of times) {
      node.firstChild.textContent = label(name);
      node.querySelector("input").value = inZone(a[key], zone);
    }
  };
  return [...times.map((t) => t.node), field("Time zone", `${at}.time_zone`, a.time_zone, rezone, { hint: "Asia/Shanghai" })];
}

// Kind `scheduled` (seed 000's draw at a set time, seed 004's platform draw): entries until
// the cutoff (blank: 30 minutes before the draw), winners picked at the draw time. Instant
// activities carry none of these fields: switching back drops them.
const SCHEDULE_KEYS = ["draw_at", "cutoff", "winners_per_prize", "one_person_lottery_number", "audience"];

function scheduleFields(a, at) {
  const set = (key) => (v) => (v === undefined || v === "" ? delete a[key] : (a[key] = v));
  const kind = choice("Kind", `${at}.kind`, a.kind ?? "instant", (v) => {
    if (v === "instant") {
      delete a.kind;
      for (const key of SCHEDULE_KEYS) delete a[key];
    } else a.kind = v;
  }, () => [["instant", "instant (draw until the prizes run out)"], ["scheduled", "scheduled (entries, then a draw at a set time)"]], { read: String });
  return h("div", { class: "row" },
    kind,
    field(`Draw at (${a.time_zone || "zone?"})`, `${at}.draw_at`, inZone(a.draw_at, a.time_zone), set("draw_at"), { hint: "2026-11-11T20:00:00+08:00" }),
    field("Entries close", `${at}.cutoff`, inZone(a.cutoff, a.time_zone), set("cutoff"), { hint: "30 minutes before" }),
    field("Winners per prize", `${at}.winners_per_prize`, a.winners_per_prize, set("winners_per_prize"), { type: "number", read: integer }),
    field("Prizes a person", `${at}.one_person_lottery_number`, a.one_person_lottery_number, set("one_person_lottery_number"), { type: "number", read: integer, hint: "1" }),
    field("Audience tag", `${at}.audience`, a.audience, set("audience"), { hint: "everyone" }));
}

function section(title, at, items, ...actions) {
  return h("section", { class: "card wide", dataset: { at } }, h("h2", {}, title), ...items, h("div", { class: "row toolbar" }, ...actions));
}

function item(at, title, onRemove, ...children) {
  return h("fieldset", { class: "item", dataset: { at } },
    h("legend", {}, title, removeButton(`Remove ${title}`, onRemove)),
    ...children);
}

function removeButton(label, onclick) {
  return onclick ? h("button", { class: "remove", "aria-label": label, title: label, onclick }, "✕") : null;
}

function button(label, testid, onclick) {
  return h("button", { dataset: { testid }, onclick }, label);
}

export function badge(state) {
  return { running: "ok", approved: "ok", submitted: "warn", refused: "bad", closed: "bad" }[state] ?? "";
}

// The activity's caps (seed 004), published with its odds: blank is no cap.
function capsFields(a, at) {
  const set = (key) => (v) => (v === undefined ? delete a[key] : (a[key] = v));
  const perfect = h("input", {
    type: "checkbox", id: `f-${at.replaceAll(".", "-")}-perfect_activity`, checked: Boolean(a.perfect_activity),
    dataset: { at: `${at}.perfect_activity` },
    onchange: (event) => (event.target.checked ? (a.perfect_activity = true) : delete a.perfect_activity),
  });
  // Players redeem a join code before their first draw (the Codes tab makes them).
  const codes = h("input", {
    type: "checkbox", id: `f-${at.replaceAll(".", "-")}-join_code_required`, checked: Boolean(a.join_code_required),
    dataset: { at: `${at}.join_code_required` },
    onchange: (event) => (event.target.checked ? (a.join_code_required = true) : delete a.join_code_required),
  });
  // Draws answered with a ticket and drawn in acceptance order, through the broker (seed 000).
  const queued = h("input", {
    type: "checkbox", id: `f-${at.replaceAll(".", "-")}-queued`, checked: Boolean(a.queued),
    dataset: { at: `${at}.queued` },
    onchange: (event) => (event.target.checked ? (a.queued = true) : delete a.queued),
  });
  return h("div", { class: "row" },
    field("Total winners", `${at}.award_num_limit`, a.award_num_limit, set("award_num_limit"), { type: "number", read: integer, hint: "no cap" }),
    field("Total participants", `${at}.join_people_total_limit`, a.join_people_total_limit, set("join_people_total_limit"), { type: "number", read: integer, hint: "no cap" }),
    h("label", {}, perfect, "100 % win (misses not drawn)"),
    h("label", {}, codes, "Join code required"),
    h("label", {}, queued, "Queued draws (first come, first served)"),
    choice("Winners' feed", `${at}.show_winning_list`, a.show_winning_list ?? "hidden",
      (v) => (v === "hidden" ? delete a.show_winning_list : (a.show_winning_list = v)),
      () => [["hidden", "hidden"], ["ticker", "one line (ticker)"], ["tiled", "tiled"]], { read: String }));
}
