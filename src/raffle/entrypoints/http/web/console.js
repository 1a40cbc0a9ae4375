// The operator console (admin role): log in, edit the campaign, move activities through
// review, set who may join each (participation policies), watch one live, switch draws,
// rules and limits at runtime, search, edit, lock and import players' profiles, edit
// decision trees, write paid content, make join codes, follow payment orders and refunds,
// see the audit chains' heads, import and export campaign files.

import { api, h, notify, fail, session } from "/web/api.js";
import { AuditView } from "/web/console-audit.js";
import { FlashView } from "/web/console-flash.js";
import { CodesView } from "/web/console-codes.js";
import { ContentView } from "/web/console-content.js";
import { Editor } from "/web/console-editor.js";
import { FilePanel } from "/web/console-file.js";
import { LiveView } from "/web/console-live.js";
import { PaymentsView } from "/web/console-payments.js";
import { PoliciesView } from "/web/console-policies.js";
import { ProfilesView } from "/web/console-profiles.js";
import { SwitchesView } from "/web/console-switches.js";
import { DenyView } from "/web/console-deny.js";
import { TagsView } from "/web/console-tags.js";
import { TreesView } from "/web/console-trees.js";

const app = document.getElementById("app");
const who = document.getElementById("who");
let live = null; // the live view on screen, stopped when the session ends

async function start() {
  if (!session.token) return showLogin();
  try {
    const me = await api("/api/auth/me");
    if (!me.is_admin) return showRefused(me);
    await showConsole(me);
  } catch (error) {
    if (error.code === "not_authenticated" || error.code === "session_ended") return showLogin(error.message);
    fail(error);
  }
}

function showLogin(message) {
  who.replaceChildren();
  const name = h("input", { id: "login-name", name: "name", autocomplete: "username", required: true });
  const password = h("input", { id: "login-password", name: "password", type: "password", autocomplete: "current-password", required: true });
  const submit = h("button", { class: "primary", type: "submit", id: "login" }, "Log in");
  const form = h("form", { class: "login", onsubmit: async (event) => {
    event.preventDefault();
    submit.disabled = true;
    try {
      const answer = await api("/api/auth/login", { method: "POST", json: { name: name.value, password: password.value } });
      session.token = answer.token;
      notify("");
      await start();
    } catch (error) {
      fail(error);
    } finally {
      submit.disabled = false;
    }
  } }, h("label", {}, "Name", name), h("label", {}, "Password", password), submit);
  app.replaceChildren(h("section", { class: "card" }, h("h2", {}, "Operator log in"), form));
  if (message) notify(message, "error");
}

function showRefused(me) {
  signedIn(me);
  const text = "Operators only: this account has no admin role.";
  app.replaceChildren(h("section", { class: "card", id: "refused" }, h("h2", {}, "Operators only"), h("p", {}, text)));
  notify(text, "error");
}

function signedIn(me) {
  who.replaceChildren(`${me.id}${me.is_admin ? " · admin" : ""} `, h("button", { class: "ghost", id: "logout", onclick: logout }, "Log out"));
}

async function logout() {
  try {
    await api("/api/auth/logout", { method: "POST" });
  } catch {
    // The session is gone either way: forgetting the token is what logs this page out.
  }
  session.token = null;
  live?.stop();
  notify("");
  showLogin();
}

async function showConsole(me) {
  signedIn(me);
  live?.stop();
  live = new LiveView();
  const editor = new Editor(() => live.setActivities(editor.activities()));
  const files = new FilePanel(() => editor.reload());
  const switches = new SwitchesView();
  const policies = new PoliciesView(() => editor.reload());
  const profiles = new ProfilesView();
  const tags = new TagsView();
  const trees = new TreesView();
  const content = new ContentView();
  const deny = new DenyView();
  const codes = new CodesView();
  const payments = new PaymentsView();
  const audit = new AuditView();
  const flash = new FlashView();
  const views = { campaign: editor.node, policies: policies.node, live: live.node, switches: switches.node, profiles: profiles.node, tags: tags.node, trees: trees.node, content: content.node, payments: payments.node, deny: deny.node, codes: codes.node, flash: flash.node, audit: audit.node, file: files.node };
  const titles = { campaign: "Campaign", policies: "Policies", live: "Live", switches: "Switches", profiles: "Profiles", tags: "Tags", trees: "Trees", content: "Content", payments: "Payments", deny: "Deny lists", codes: "Codes", flash: "Flash sales", audit: "Audit", file: "Import / export" };
  const panel = h("section", { class: "card wide", id: "view" });
  const tabs = Object.keys(views).map((key) => h("button", { role: "tab", id: `tab-${key}`, onclick: () => show(key) }, titles[key]));
  let chosen = null; // a tab the operator opened while the campaign was still loading
  const show = (key) => {
    chosen = key;
    tabs.forEach((t) => t.setAttribute("aria-selected", String(t.id === `tab-${key}`)));
    panel.replaceChildren(views[key]);
    notify(""); // a message belongs to the view it came from
    if (key === "live") live.start();
    else live.stop();
    if (key === "switches") switches.refresh();
    if (key === "policies") policies.refresh();
    if (key === "profiles") profiles.refresh();
    if (key === "tags") tags.refresh();
    if (key === "trees") trees.refresh();
    if (key === "content") content.refresh();
    if (key === "deny") deny.refresh();
    if (key === "codes") codes.refresh();
    if (key === "payments") payments.refresh();
    if (key === "audit") audit.refresh();
    if (key === "flash") flash.refresh();
  };
  app.replaceChildren(h("nav", { class: "tabs wide", role: "tablist" }, ...tabs), panel);
  await editor.reload();
  if (chosen === null) show(editor.activities().some((a) => a.state === "running") ? "live" : "campaign");
}

document.addEventListener("session-expired", (event) => {
  live?.stop();
  showLogin(event.detail);
});

start();
