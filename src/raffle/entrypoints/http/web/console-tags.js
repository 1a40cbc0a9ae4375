// Tags (seed 004 用户标签): static member lists and dynamic conditions on profiles, with a
// preview of how many users a tag holds. A malformed condition is refused with its line and
// column, and the cursor is put there.

import { api, h, notify } from "/web/api.js";
import { report } from "/web/console-fields.js";

const EXAMPLE = 'age > 50 and attrs&["vip"] == true';
const FIELDS = ["age", "level", "gender", "birth_date", "region", "channel", "sn", "phone", "attrs."];
const OPERATORS = ["==", "!=", ">", ">=", "<", "<=", "in", "not in", "exists", "not exists"];

// A value typed in a form: a number, true/false, or text (dates stay "YYYY-MM-DD" text,
// which the API reads as a date for date fields); `in` takes a comma-separated list.
function typed(text) {
  const t = text.trim();
  if (t === "true" || t === "false") return t === "true";
  if (t !== "" && !Number.isNaN(Number(t))) return Number(t);
  return t;
}

export class TagsView {
  constructor() {
    this.node = h("div", { class: "tags" });
    this.form = this.editor();
    this.detail = h("div", { class: "tag-detail", dataset: { testid: "tag-detail" } });
    this.list = h("div", { class: "scroll" });
    this.node.append(this.form.node, this.list, this.detail);
  }

  async refresh() {
    try {
      this.render(await api("/api/admin/tags"));
    } catch (error) {
      report(error);
    }
  }

  render(tags) {
    if (!tags.length) {
      this.list.replaceChildren(h("p", { class: "muted", dataset: { testid: "no-tags" } }, "No tag yet."));
      return;
    }
    const rows = tags.map((tag) => h("tr", { dataset: { tag: tag.name } },
      h("td", {}, h("code", {}, tag.name)),
      h("td", {}, tag.kind),
      h("td", {}, tag.kind === "dynamic" ? h("code", {}, tag.condition) : "member list"),
      h("td", {}, tag.description),
      h("td", {},
        h("button", { dataset: { testid: "preview" }, onclick: () => this.preview(tag) }, "Preview"),
        h("button", { onclick: () => this.edit(tag) }, "Edit"),
        tag.kind === "static" ? h("button", { onclick: () => this.members(tag) }, "Members") : "",
        h("button", { class: "danger", onclick: (e) => this.remove(tag, e.currentTarget) }, "Delete"))));
    this.list.replaceChildren(h("table", { dataset: { testid: "tags" } },
      h("thead", {}, h("tr", {}, ...["Name", "Kind", "Condition", "Description", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...rows)));
  }

  editor() {
    const name = h("input", { name: "name", maxlength: 64, pattern: "[a-z][a-z0-9_]*", placeholder: "senior_vip", "aria-label": "Name" });
    const kind = h("select", { name: "kind", "aria-label": "Kind" },
      h("option", { value: "dynamic" }, "dynamic: a condition"), h("option", { value: "static" }, "static: a member list"));
    const condition = h("textarea", { name: "condition", rows: 3, maxlength: 2000, placeholder: EXAMPLE, "aria-label": "Condition" });
    const description = h("input", { name: "description", maxlength: 200, "aria-label": "Description" });
    // Seed 004's structured form: field, operator, value; saved as the condition it stands for.
    const field = h("select", { "aria-label": "Field" }, ...FIELDS.map((f) => h("option", { value: f }, f === "attrs." ? "attrs.<name>" : f)));
    const attribute = h("input", { maxlength: 64, placeholder: "vip", "aria-label": "Attribute", hidden: true });
    const op = h("select", { "aria-label": "Operator" }, ...OPERATORS.map((o) => h("option", { value: o }, o)));
    const value = h("input", { maxlength: 200, placeholder: "50", "aria-label": "Value" });
    field.addEventListener("change", () => { attribute.hidden = field.value !== "attrs."; });
    const clause = () => {
      const name = field.value === "attrs." ? `attrs.${attribute.value.trim()}` : field.value;
      const body = { field: name, operator: op.value };
      if (op.value === "in" || op.value === "not in") body.value = value.value.split(",").filter((v) => v.trim()).map(typed);
      else if (!op.value.endsWith("exists")) body.value = typed(value.value);
      return body;
    };
    const where = h("p", { class: "muted", dataset: { testid: "condition-error" } });
    kind.addEventListener("change", () => { condition.disabled = kind.value === "static"; });
    const node = h("form", { class: "tag-form", onsubmit: (e) => { e.preventDefault(); this.save(); } },
      h("h3", {}, "Define a tag"),
      h("label", {}, "Name ", name), h("label", {}, "Kind ", kind),
      h("label", { class: "wide" }, "Condition ", condition),
      h("div", { class: "row clause" }, "Or a clause: ", field, attribute, op, value,
        h("button", { type: "button", dataset: { testid: "save-clause" }, onclick: () => this.save(clause()) }, "Save as clause")),
      h("p", { class: "muted" }, 'Facts: age, level, gender, birth_date (d"2000-01-01"), region, channel, sn, phone, attrs&["name"], other tags as tags["name"]; and, or, not, in [..]. See docs/tags.md.'),
      where,
      h("label", {}, "Description ", description),
      h("button", { type: "submit", class: "primary", dataset: { testid: "save-tag" } }, "Save"));
    return { node, name, kind, condition, description, where };
  }

  edit(tag) {
    const f = this.form;
    f.name.value = tag.name;
    f.kind.value = tag.kind;
    f.condition.value = tag.condition;
    f.condition.disabled = tag.kind === "static";
    f.description.value = tag.description;
    f.name.focus();
  }

  // `clause`: seed 004's structured form instead of the written condition.
  async save(clause) {
    const f = this.form;
    const body = { kind: clause ? "dynamic" : f.kind.value, description: f.description.value };
    if (clause) body.clause = clause;
    else if (body.kind === "dynamic") body.condition = f.condition.value;
    f.where.textContent = "";
    try {
      await api(`/api/admin/tags/${encodeURIComponent(f.name.value)}`, { method: "PUT", json: body });
      notify(`Tag ${f.name.value} saved.`, "ok");
      await this.refresh();
    } catch (error) {
      report(error);
      const at = error.errors?.find((e) => e.line);
      if (at) this.point(at.line, at.column);
    }
  }

  // Put the cursor where the condition went wrong.
  point(line, column) {
    const text = this.form.condition.value;
    let offset = 0;
    for (let n = 1; n < line; n++) offset = text.indexOf("\n", offset) + 1;
    offset += column - 1;
    this.form.where.textContent = `Line ${line}, column ${column}.`;
    this.form.condition.focus();
    this.form.condition.setSelectionRange(offset, offset + 1);
  }

  async remove(tag, button) {
    if (!confirm(`Delete tag ${tag.name}?`)) return;
    button.disabled = true;
    try {
      await api(`/api/admin/tags/${encodeURIComponent(tag.name)}`, { method: "DELETE" });
      notify(`Tag ${tag.name} deleted.`, "ok");
      this.detail.replaceChildren();
      await this.refresh();
    } catch (error) {
      button.disabled = false;
      report(error);
    }
  }

  async preview(tag) {
    this.detail.replaceChildren(h("p", { class: "muted" }, `Counting the users ${tag.name} holds…`));
    try {
      const p = await api(`/api/admin/tags/${encodeURIComponent(tag.name)}/preview?sample=20`);
      const scanned = p.complete ? `of ${p.scanned} users` : `of the first ${p.scanned} users scanned`;
      this.detail.replaceChildren(
        h("h3", {}, `Preview of ${tag.name}`),
        h("p", {}, h("strong", { dataset: { testid: "matched" } }, String(p.matched)), ` ${scanned}`),
        p.sample.length ? h("p", { class: "muted" }, `For example: ${p.sample.join(", ")}`) : "");
    } catch (error) {
      this.detail.replaceChildren();
      report(error);
    }
  }

  async members(tag) {
    const url = `/api/admin/tags/${encodeURIComponent(tag.name)}/members`;
    const ids = h("textarea", { rows: 4, "aria-label": "User ids", placeholder: "One user id a line (a pasted list up to 10,000)" });
    const change = async (path, verb) => {
      const list = ids.value.split(/[\s,]+/).filter(Boolean);
      if (!list.length) return;
      try {
        const done = await api(path, { method: "POST", json: { user_ids: list } });
        notify(`${done.changed} ${verb}.`, "ok");
        ids.value = "";
        await this.members(tag);
      } catch (error) {
        report(error);
      }
    };
    try {
      const page = await api(`${url}?limit=100`);
      this.detail.replaceChildren(
        h("h3", {}, `Members of ${tag.name}`),
        h("p", { dataset: { testid: "members" } }, page.user_ids.join(", ") || "None yet."),
        page.next ? h("p", { class: "muted" }, "The first 100 shown.") : "",
        ids,
        h("button", { onclick: () => change(url, "added") }, "Add"),
        h("button", { onclick: () => change(`${url}/remove`, "removed") }, "Remove"));
    } catch (error) {
      report(error);
    }
  }
}
