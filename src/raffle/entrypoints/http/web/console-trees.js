// Decision trees (seed 003's rule tree): pick a stored tree or start one, edit its document
// (JSON, the shape PUT /api/admin/route-trees/{name} takes) and see it drawn as a tree as you
// type; a save the server refuses lists each problem with its reason.

import { api, h, notify, Problem } from "/web/api.js";
import { report } from "/web/console-fields.js";

const STARTER = {
  description: "",
  time_zone: "Asia/Shanghai",
  root: "by_age",
  nodes: [
    { id: "by_age", field: "age", lines: [{ op: "<", value: 18, to: "minors" }, { op: "default", to: "everyone" }] },
  ],
  leaves: [{ id: "minors", activity: 100301 }, { id: "everyone", activity: 100301 }],
};

export class TreesView {
  constructor() {
    this.trees = [];
    this.version = 0; // the version the text was read from: the save goes over it
    this.list = h("div", { class: "row toolbar", id: "tree-list" });
    this.name = h("input", { id: "tree-name", "aria-label": "Tree name", placeholder: "newcomers", maxlength: 64 });
    this.text = h("textarea", { id: "tree-text", rows: 18, wrap: "off", spellcheck: "false", "aria-label": "Tree (JSON)", oninput: () => this.draw() });
    this.problems = h("ul", { class: "problems", id: "tree-problems" });
    this.drawing = h("div", { class: "tree-drawing", id: "tree-drawing" });
    this.node = h("div", { class: "trees" },
      h("p", { class: "muted" }, "A decision tree routes each player to an activity by their profile and tags: lines are tried in order, the default one when none holds; a fact the profile lacks takes the default. Players ask GET /api/me/route/{name}."),
      this.list,
      h("div", { class: "row toolbar" },
        h("label", {}, "Name ", this.name),
        h("button", { class: "primary", id: "tree-save", onclick: () => this.save() }, "Save"),
        h("button", { id: "tree-delete", onclick: () => this.remove() }, "Delete")),
      this.problems,
      h("div", { class: "tree-edit" }, this.text, this.drawing));
  }

  async refresh() {
    try {
      this.trees = await api("/api/admin/route-trees");
    } catch (error) {
      return report(error);
    }
    this.list.replaceChildren(
      ...this.trees.map((t) => h("button", { dataset: { tree: t.name }, onclick: () => this.open(t) }, `${t.name} · v${t.version}`)),
      h("button", { id: "tree-new", onclick: () => this.open(null) }, "New tree"));
    const current = this.trees.find((t) => t.name === this.name.value);
    this.open(current ?? this.trees[0] ?? null);
  }

  open(tree) {
    this.problems.replaceChildren();
    this.version = tree?.version ?? 0;
    this.name.value = tree?.name ?? "";
    const { name, version, saved_by, saved_at, ...document } = tree ?? STARTER;
    this.text.value = JSON.stringify(document, (key, value) => (value === null ? undefined : value), 2);
    this.draw();
  }

  draw() {
    let document;
    try {
      document = JSON.parse(this.text.value);
    } catch (error) {
      return this.drawing.replaceChildren(h("p", { class: "muted" }, `Not JSON yet: ${error.message}`));
    }
    this.drawing.replaceChildren(h("ul", { class: "tree", dataset: { testid: "tree" } }, drawNode(document, document.root, [])));
  }

  async save() {
    this.problems.replaceChildren();
    let document;
    try {
      document = JSON.parse(this.text.value);
    } catch (error) {
      return notify(`The tree is not JSON: ${error.message}`, "error");
    }
    const name = this.name.value.trim();
    try {
      const saved = await api(`/api/admin/route-trees/${encodeURIComponent(name)}`, { method: "PUT", json: { ...document, base_version: this.version } });
      notify(`Saved ${saved.name}, version ${saved.version}.`, "ok");
      this.name.value = saved.name;
      await this.refresh();
    } catch (error) {
      this.showProblems(error);
    }
  }

  async remove() {
    const name = this.name.value.trim();
    if (!this.version) return notify("Pick a stored tree to delete.", "error");
    try {
      await api(`/api/admin/route-trees/${encodeURIComponent(name)}?base_version=${this.version}`, { method: "DELETE" });
      notify(`Deleted ${name}.`, "ok");
      this.name.value = "";
      await this.refresh();
    } catch (error) {
      report(error);
    }
  }

  showProblems(error) {
    const found = error instanceof Problem ? error.errors : [];
    this.problems.replaceChildren(...found.map((p) => h("li", { dataset: { reason: p.reason ?? "" } },
      [p.at, p.reason].filter(Boolean).join(" · ") + `: ${p.message}`)));
    if (!found.length) return report(error);
    notify(`Not saved: ${found.length} problem${found.length > 1 ? "s" : ""} listed below.`, "error");
  }
}

// One node and what its lines lead to, nested; a line back to a node on its own path is
// drawn as such rather than followed (the server refuses it: `cycle`).
function drawNode(document, id, path) {
  const leaf = (document.leaves ?? []).find((l) => l.id === id);
  if (leaf) return h("li", { class: "leaf" }, h("strong", {}, `activity ${leaf.activity}`), h("small", { class: "muted" }, ` (${id})`));
  const node = (document.nodes ?? []).find((n) => n.id === id);
  if (!node) return h("li", { class: "missing" }, `nothing named “${id}”`);
  if (path.includes(id)) return h("li", { class: "missing" }, `back to ${id} (a cycle)`);
  const tests = node.tag ? `tag ${node.tag}` : node.field;
  const lines = (node.lines ?? []).map((line) => h("li", {},
    h("code", { class: "line" }, describeLine(tests, line)),
    h("ul", {}, drawNode(document, line.to, [...path, id]))));
  return h("li", { class: "node" }, h("span", { class: "test" }, `${id}: ${tests}?`), h("ul", {}, ...lines));
}

function describeLine(tests, line) {
  if (line.op === "default") return "otherwise";
  if (line.op === "exists") return `${tests} is known`;
  return `${line.op} ${JSON.stringify(line.value)}`;
}
