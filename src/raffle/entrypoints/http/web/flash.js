// The flash sale page (/flash#ID): the sale with a countdown run from the server's clock (the
// page's `Date`; read again with its ETag, so waiting costs the server no database read), the
// proof-of-work challenge solved here with Web Crypto, the purchase, then its result polled
// until it is the order (or sold out). docs/flash-sales.md
//
// Stable hooks for tests: [data-testid=flash-countdown] (data-left: whole seconds to the
// start), [data-testid=flash-buy], [data-testid=flash-status] with data-state waiting |
// solving | queued | ordered | sold_out | already_bought | failed, [data-testid=flash-order].
import { Problem, api, fail, h, notify, session } from "/web/api.js";
import { t } from "/web/i18n.js";

const POLL_MS = 1000;
const app = document.getElementById("app");
const saleId = Number(/^#(\d+)$/.exec(location.hash)?.[1]);
const countdown = h("p", { class: "countdown", "data-testid": "flash-countdown", "aria-live": "polite" });
const status = h("p", { "data-testid": "flash-status", "aria-live": "polite" });
const order = h("p", { "data-testid": "flash-order" });
const buy = h("button", { class: "primary", "data-testid": "flash-buy", disabled: true, onclick: onBuy }, t("flash.buy"));
let sale = null;
let tag = null;
let skew = 0; // the server's clock less this browser's, in ms
let busy = false;

function say(state, text) {
  status.dataset.state = state;
  status.textContent = text;
}

// The page, and the server's time from its Date: an unchanged page answers 304.
async function read() {
  const answer = await fetch(`/api/flash-sales/${saleId}`, { headers: tag ? { "If-None-Match": tag } : {} });
  const date = Date.parse(answer.headers.get("date") ?? "");
  if (!Number.isNaN(date)) skew = date - Date.now();
  if (answer.status === 304) return;
  const body = await answer.json();
  if (!answer.ok) throw new Problem(answer.status, body);
  tag = answer.headers.get("etag");
  sale = body;
}

function tick() {
  if (!sale) return;
  const now = Date.now() + skew;
  const left = Math.max(0, Math.ceil((Date.parse(sale.starts_at) - now) / 1000));
  const ended = now >= Date.parse(sale.ends_at);
  countdown.dataset.left = String(left);
  countdown.textContent = ended ? t("flash.ended") : left > 0 ? t("flash.starts_in", { n: left }) : t("flash.open");
  buy.disabled = busy || left > 0 || ended || !session.token;
}

// SHA-256("challenge:answer") with `difficulty` leading zero bits: about 2^difficulty tries.
async function solve(challenge, difficulty) {
  const encoder = new TextEncoder();
  for (let nonce = 0; ; nonce++) {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(`${challenge}:${nonce}`)));
    if (zeroBits(digest) >= difficulty) return String(nonce);
  }
}

function zeroBits(digest) {
  let bits = 0;
  for (const byte of digest) {
    if (byte) return bits + Math.clz32(byte) - 24;
    bits += 8;
  }
  return bits;
}

async function onBuy() {
  if (busy) return;
  busy = true;
  tick();
  try {
    say("solving", t("flash.solving"));
    const asked = await api(`/api/flash-sales/${saleId}/challenge`, { method: "POST" });
    const answer = await solve(asked.challenge, asked.difficulty);
    const { path } = await api(`/api/flash-sales/${saleId}/path`, { method: "POST", json: { challenge: asked.challenge, answer } });
    const bought = await api(`/api/flash-sales/${saleId}/${path}/purchase`, { method: "POST" });
    if (bought.status === "queued") await follow();
    else if (bought.status === "sold_out") say("sold_out", t("flash.sold_out"));
    else say("already_bought", t("flash.already_bought"));
  } catch (error) {
    say("failed", "");
    fail(error);
  }
  busy = false;
  tick();
}

// Seed 002's poll: -1 sold out, 0 queued, else the order's id.
async function follow() {
  say("queued", t("flash.queued"));
  for (;;) {
    const { result } = await api(`/api/flash-sales/${saleId}/result`);
    if (typeof result === "string") {
      say("ordered", t("flash.ordered"));
      order.textContent = result;
      return;
    }
    if (result === -1) return say("sold_out", t("flash.sold_out"));
    await new Promise((done) => setTimeout(done, POLL_MS));
  }
}

async function start() {
  if (!saleId) return notify(t("flash.none"), "error");
  await read();
  const price = sale.currency === "points" ? t("flash.points", { n: sale.price }) : (sale.price / 100).toFixed(2);
  app.replaceChildren(h("section", { class: "card wide", "data-testid": "flash-panel" },
    h("h2", {}, sale.name), h("p", { class: "muted" }, sale.description),
    h("p", {}, t("flash.price", { price }), " · ", t("flash.stock", { n: sale.stock })),
    countdown, h("div", { class: "row" }, buy), status, order,
    session.token ? null : h("p", {}, h("a", { href: "/" }, t("flash.log_in")))));
  say("waiting", "");
  tick();
  setInterval(tick, 250);
  setInterval(() => read().catch(fail), 10_000); // a page changed meanwhile (304 otherwise)
}

start().catch(fail);
