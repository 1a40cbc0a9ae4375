// Runtime switches (seed 001/003 降级开关): pause an activity's draws, take a published rule
// out of a strategy, change a limit, put the service in read-only maintenance; each change
// reaches every process within a second and is listed below with who made it.

import { api, h, notify } from "/web/api.js";
import { report } from "/web/console-fields.js";
import { localTime, localZone } from "/web/times.js";

const LIMIT_LABELS = {
  draws_per_second: "Draws per second, per player",
  registrations_per_hour: "Registrations per hour, per address",
  draw_batch_size: "Draws per database transaction (batch size)",
};

// What a switch is, in words: [group, label].
function describe(name) {
  let m;
  if (name === "maintenance") return ["service", "Read-only maintenance: every write answers 503"];
  if ((m = name.match(/^activity\.(\d+)\.draws$/))) return ["draws", `Draws of activity ${m[1]}`];
  if ((m = name.match(/^strategy\.(\d+)\.rule\.weight$/))) return ["rules", `Strategy ${m[1]}: weight tiers`];
  if ((m = name.match(/^strategy\.(\d+)\.rule\.lock\.(\d+)$/))) return ["rules", `Strategy ${m[1]}: lock of prize ${m[2]}`];
  if ((m = name.match(/^profile\.edit\.(\w+)$/))) return ["profile", `Players may change their ${m[1].replace("_", " ")}`];
  return ["limits", LIMIT_LABELS[name] ?? name];
}

const GROUPS = {
  service: "Service",
  draws: "Draws (off: players are told draws are paused, nothing is spent)",
  rules: "Rules (off: taken out of the draws and of the published odds)",
  profile: "Profile fields (on: players may change it in their own profile)",
  limits: "Limits",
};

export class SwitchesView {
  constructor() {
    this.node = h("div", { class: "switches" });
  }

  async refresh() {
    try {
      const [switches, audit] = await Promise.all([
        api("/api/admin/switches"),
        api("/api/admin/switches/audit?limit=50"),
      ]);
      this.render(switches, audit);
    } catch (error) {
      report(error);
    }
  }

  render(switches, audit) {
    const groups = {};
    for (const s of switches) (groups[describe(s.name)[0]] ??= []).push(s);
    this.node.replaceChildren(
      ...Object.entries(GROUPS).filter(([key]) => groups[key]).map(([key, title]) =>
        h("section", { class: "switch-group" }, h("h3", {}, title), ...groups[key].map((s) => this.row(s)))),
      h("h3", {}, `Changes (${localZone()} time)`),
      auditTable(audit),
    );
  }

  row(s) {
    const label = describe(s.name)[1];
    const changed = s.value !== s.default;
    if (s.value === "on" || s.value === "off") {
      const next = s.value === "on" ? "off" : "on";
      return h("div", { class: "row switch", dataset: { switch: s.name } },
        h("span", {}, label),
        h("span", { class: `badge ${changed ? "bad" : "ok"}`, dataset: { testid: "state" } }, s.value),
        h("button", { dataset: { testid: "toggle" }, onclick: (e) => this.set(s.name, next, e.currentTarget) },
          `Switch ${next}`));
    }
    const input = h("input", { type: "number", min: 1, value: s.value, inputmode: "numeric", "aria-label": label });
    return h("div", { class: "row switch", dataset: { switch: s.name } },
      h("span", {}, label, changed ? h("small", { class: "muted" }, ` (setting: ${s.default})`) : ""),
      input,
      h("button", { dataset: { testid: "save" }, onclick: (e) => this.set(s.name, input.value, e.currentTarget) }, "Save"));
  }

  async set(name, value, button) {
    button.disabled = true;
    try {
      const now = await api(`/api/admin/switches/${encodeURIComponent(name)}`, { method: "PUT", json: { value } });
      notify(`${describe(name)[1]}: ${now.value}.`, "ok");
      await this.refresh();
    } catch (error) {
      button.disabled = false;
      report(error);
    }
  }
}

function auditTable(audit) {
  if (!audit.length) return h("p", { class: "muted", dataset: { testid: "no-changes" } }, "No change yet.");
  const rows = audit.map((c) => h("tr", {},
    h("td", {}, localTime(c.at)), h("td", {}, c.actor), h("td", {}, h("code", {}, c.name)),
    h("td", {}, c.old), h("td", {}, c.new)));
  return h("div", { class: "scroll" },
    h("table", { dataset: { testid: "switch-audit" } },
      h("thead", {}, h("tr", {}, ...["When", "Who", "Switch", "From", "To"].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...rows)));
}
