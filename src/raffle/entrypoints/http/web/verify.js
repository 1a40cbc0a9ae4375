// The verify page (/verify): a draw's receipt checked against its revealed seed and the
// published odds by the server's verifier (POST /api/receipts/verify). `#order/ID` fills in
// the signed-in player's receipt of that draw; any receipt may be pasted instead. While the
// seed is still secret the page asks again every few seconds, and says so.
//
// Stable hooks for tests: [data-testid=receipt] the receipt's JSON, [data-testid=check] the
// button, [data-testid=verdict] with data-verdict matches | differs | secret | invalid.
import { api, fail, h, notify } from "/web/api.js";
import { t } from "/web/i18n.js";

const AGAIN_MS = 2000;
const app = document.getElementById("app");
const receipt = h("textarea", { id: "receipt", rows: 16, spellcheck: "false", "data-testid": "receipt",
  "aria-label": t("verify.receipt") });
const verdict = h("p", { "data-testid": "verdict", "aria-live": "polite" });
let waiting = null;

app.replaceChildren(h("section", { class: "card wide" },
  h("h2", {}, t("verify.title")), h("p", { class: "muted" }, t("verify.about")),
  h("label", { for: "receipt" }, t("verify.receipt")), receipt,
  h("div", { class: "row" }, h("button", { class: "primary", "data-testid": "check", onclick: check }, t("verify.check"))),
  verdict));

function say(kind, text) {
  verdict.dataset.verdict = kind;
  verdict.textContent = text;
}

async function check() {
  clearTimeout(waiting);
  let body;
  try {
    body = JSON.parse(receipt.value);
  } catch {
    return say("invalid", t("verify.not_json"));
  }
  try {
    const found = await api("/api/receipts/verify", { method: "POST", json: body });
    if (!found.revealed) {
      say("secret", t("verify.secret"));
      waiting = setTimeout(check, AGAIN_MS);
    } else if (found.matches) {
      say("matches", t("verify.matches"));
    } else {
      say("differs", t("verify.differs", { fields: found.differs.join(", ") }));
    }
  } catch (error) {
    say("invalid", error.message);
  }
}

async function start() {
  const order = /^#order\/([\w-]{1,32})$/.exec(location.hash)?.[1];
  if (!order) return;
  try {
    const mine = await api(`/api/me/draws/${order}/receipt`);
    receipt.value = JSON.stringify(mine, null, 2);
    await check();
  } catch (error) {
    fail(error);
  }
}

notify("");
start();
