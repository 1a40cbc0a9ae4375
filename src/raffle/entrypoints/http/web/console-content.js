// Paid content (seed 000 付费知识): write its title, summary, cover, price, free preview and
// Markdown body, with a preview of each as players will see it (rendered and sanitised by the
// server), and put it on sale or take it off. Content awards name it by its id.

import { api, h, notify } from "/web/api.js";
import { report } from "/web/console-fields.js";

const NEXT = { draft: ["on_sale"], on_sale: ["off_sale"], off_sale: ["on_sale"] };
const STEP = { on_sale: "Put on sale", off_sale: "Take off sale" };
const EMPTY = { id: "", title: "", summary: "", cover: null, price_cents: 0, preview: "", body: "", state: null };
const yuan = (cents) => (cents / 100).toFixed(2);
const heading = (c) => `Edit ${c.id} (${c.state})`;

export class ContentView {
  constructor() {
    this.node = h("div", { class: "content-admin" });
    this.list = h("div", { class: "scroll" });
    this.form = h("form", { class: "content-edit", dataset: { testid: "content-form" } });
    this.node.append(
      h("div", { class: "row toolbar" }, h("button", { onclick: () => this.edit(EMPTY) }, "New content")),
      this.list, this.form);
  }

  async refresh() {
    try {
      this.render(await api("/api/admin/content?limit=100"));
    } catch (error) {
      report(error);
    }
  }

  render(items) {
    if (!items.length) {
      this.list.replaceChildren(h("p", { class: "muted", dataset: { testid: "no-content" } }, "No content yet."));
      return;
    }
    const rows = items.map((c) => h("tr", { dataset: { content: c.id } },
      h("td", {}, h("code", {}, c.id)), h("td", {}, c.title),
      h("td", { dataset: { testid: "state" } }, c.state), h("td", { class: "num" }, yuan(c.price_cents)),
      h("td", {}, h("button", { onclick: () => this.edit(c) }, "Edit"),
        ...NEXT[c.state].map((to) => h("button", { dataset: { testid: `to-${to}` },
          onclick: (e) => this.move(c, to, e.currentTarget) }, STEP[to])))));
    this.list.replaceChildren(h("table", { dataset: { testid: "content-list" } },
      h("thead", {}, h("tr", {}, ...["Id", "Title", "State", "Price (¥)", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...rows)));
  }

  edit(c) {
    const isNew = c.state === null;
    this.editing = c.id;
    const input = (name, label, value, attrs = {}) =>
      h("label", {}, label, h("input", { name, value: value ?? "", "aria-label": label, ...attrs }));
    const area = (name, label, value) => {
      const text = h("textarea", { name, rows: name === "body" ? 14 : 5, "aria-label": label }, value);
      const shown = h("div", { class: "markdown-preview", dataset: { testid: `${name}-preview` } });
      const look = h("button", { type: "button", onclick: () => this.preview(text.value, shown) }, `Preview ${label.toLowerCase()}`);
      if (value) this.preview(value, shown);
      return h("div", { class: "markdown-field" }, h("label", {}, label, text), look, shown);
    };
    this.heading = h("h3", {}, isNew ? "New content" : heading(c));
    this.form.replaceChildren(
      this.heading,
      input("id", "Id", c.id, { readonly: !isNew, maxlength: 64, placeholder: "course-1" }),
      input("title", "Title", c.title, { maxlength: 120 }),
      input("summary", "Summary", c.summary, { maxlength: 500 }),
      input("cover", "Cover image (https://…)", c.cover, { type: "url", maxlength: 500 }),
      input("price", "Price (¥)", yuan(c.price_cents), { type: "number", min: 0, step: "0.01" }),
      area("preview", "Free preview", c.preview), area("body", "Body", c.body),
      h("ul", { class: "problems", dataset: { testid: "problems" } }),
      h("button", { class: "primary", type: "submit" }, "Save"));
    this.form.onsubmit = (event) => {
      event.preventDefault();
      this.save(isNew, event.submitter);
    };
  }

  async preview(markdown, shown) {
    try {
      const { html } = await api("/api/admin/content/preview", { method: "POST", json: { markdown } });
      shown.innerHTML = html; // sanitised by the server (adapters/markdown.py)
    } catch (error) {
      report(error);
    }
  }

  async save(isNew, button) {
    const f = this.form.elements;
    const text = {
      title: f.title.value, summary: f.summary.value, cover: f.cover.value.trim() || null,
      price_cents: Math.round(Number(f.price.value || 0) * 100), preview: f.preview.value, body: f.body.value,
    };
    const problems = this.form.querySelector("ul.problems");
    problems.replaceChildren();
    button.disabled = true;
    try {
      const saved = isNew
        ? await api("/api/admin/content", { method: "POST", json: { id: f.id.value.trim(), ...text } })
        : await api(`/api/admin/content/${encodeURIComponent(f.id.value)}`, { method: "PUT", json: text });
      notify(`Saved ${saved.id}.`, "ok");
      this.edit(saved);
      await this.refresh();
    } catch (error) {
      problems.replaceChildren(...(error.errors ?? []).map((e) => h("li", {}, `${e.at}: ${e.message}`)));
      report(error);
    } finally {
      button.disabled = false;
    }
  }

  async move(c, to, button) {
    button.disabled = true;
    try {
      const moved = await api(`/api/admin/content/${encodeURIComponent(c.id)}/state`, { method: "POST", json: { state: to } });
      notify(`${moved.id} is ${moved.state.replace("_", " ")}.`, "ok");
      if (this.editing === moved.id) this.heading.textContent = heading(moved); // edits typed stay
      await this.refresh();
    } catch (error) {
      button.disabled = false;
      report(error);
    }
  }
}
