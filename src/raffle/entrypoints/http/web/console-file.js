// Campaign files in and out: paste or upload YAML (or JSON) and import it; export everything
// stored as one file, shown here and offered as a download.

import { api, h, notify, Problem } from "/web/api.js";
import { report } from "/web/console-fields.js";

export class FilePanel {
  constructor(onImported) {
    this.onImported = onImported;
    this.text = h("textarea", { id: "campaign-text", rows: 16, wrap: "off", spellcheck: "false", "aria-label": "Campaign file (YAML)", placeholder: "awards:\n  - {id: 101, kind: points, title: Ten points, config: \"10\"}" });
    this.problems = h("ul", { class: "problems", id: "import-problems" });
    this.download = h("a", { id: "export-download", hidden: true }, "Download campaign.yaml");
    const upload = h("input", { type: "file", id: "campaign-upload", accept: ".yaml,.yml,.json,text/yaml,application/json", onchange: (e) => this.read(e.target.files[0]) });
    this.node = h("div", {},
      h("p", { class: "muted" }, "Campaign files, as `raffle load` reads them: importing stores it all or nothing; exporting writes everything stored (code pools: only the codes not handed out yet)."),
      h("div", { class: "row toolbar" },
        h("button", { class: "primary", id: "import", onclick: () => this.import() }, "Import"),
        h("button", { id: "export", onclick: () => this.export() }, "Export"),
        h("label", { class: "upload" }, "Or upload a file", upload)),
      this.problems, this.text, this.download);
  }

  async read(file) {
    if (file) this.text.value = await file.text();
  }

  async import() {
    this.problems.replaceChildren();
    try {
      const loaded = await api("/api/admin/campaigns", { method: "POST", text: this.text.value });
      notify(`Imported: ${loaded.awards} awards, ${loaded.strategies} strategies, ${loaded.activities} activities, ${loaded.codes} new codes.`, "ok");
      await this.onImported();
    } catch (error) {
      const found = error instanceof Problem ? error.errors : [];
      this.problems.replaceChildren(...found.map((p) => h("li", {}, [p.line ? `line ${p.line}` : "", p.at].filter(Boolean).join(", ") + `: ${p.message}`)));
      if (!found.length) return report(error);
      notify(`Not imported: ${found.length} problem${found.length > 1 ? "s" : ""} listed below.`, "error");
    }
  }

  async export() {
    try {
      const text = await api("/api/admin/campaigns");
      this.text.value = text;
      URL.revokeObjectURL(this.download.href);
      this.download.href = URL.createObjectURL(new Blob([text], { type: "application/yaml" }));
      this.download.download = "campaign.yaml";
      this.download.hidden = false;
      notify("Exported: the stored campaign is below.", "ok");
    } catch (error) {
      report(error);
    }
  }
}
