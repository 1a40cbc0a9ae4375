// The player page: log in or register, choose an activity (remembered in the URL hash,
// #/activity/ID), draw on the prize board, sign in daily, spend points on chances, follow the
// delivery of prizes won, browse paid content and read what they hold. Every call goes through api.js; a 401 anywhere returns to the login
// form with "session expired"; other problems are shown in the notice bar.
//
// Every word comes from the catalogue of the language chosen (i18n.js); the switch in the
// header draws the page again in the other one.
//
// Stable hooks for tests (tests/browser/player.py): the login form [data-testid=login] with
// fields labelled Name and Password and buttons "Log in" / "Register" (in English);
// [data-testid=logout]; [data-testid=language] the language switch (a <select> of codes);
// the activity chooser [data-testid=activity]; [data-testid=draw-reason] says why the draw
// button is off. The board, engage, prizes and scheduled modules list theirs.
import { Problem, api, fail, h, notify, session } from "/web/api.js";
import { Board, boardItems, tiers } from "/web/board.js";
import { ContentShelf } from "/web/content.js";
import * as engage from "/web/engage.js";
import { Checkout } from "/web/payments.js";
import { choose as chooseLanguage, language, list, offered, ownName, t } from "/web/i18n.js";
import { MyPrizes } from "/web/my-prizes.js";
import * as prizes from "/web/prizes.js";
import { ScheduledEntry } from "/web/scheduled.js";
import { WinnersFeed } from "/web/winners.js";

const app = document.getElementById("app");
const who = document.getElementById("who");
const header = document.querySelector("header.top");
const board = new Board(onDraw);
const state = { user: null, activities: [], activity: null, odds: null, mine: null, points: null };
const slots = {}; // the panels' bodies, by name
const myPrizes = new MyPrizes(onSaveAddress, handle, onClaim);
const shelf = new ContentShelf(handle, (page) => checkout.buy(page, slots.content).catch(handle));
const checkout = new Checkout(handle, async (id) => {
  await shelf.open(id);
  await checkout.orders(slots.orders).catch(handle);
}, () => shelf.list().catch(handle));
const feed = new WinnersFeed(handle);
const scheduled = new ScheduledEntry((id) => state.mine?.prizes.find((p) => p.award_id === id)?.title ?? `#${id}`,
  handle, () => refresh().catch(handle));
let loads = 0;
let drawing = false;
let drawsFrom = 0; // after a 429, no draw before this time (ms): the wait the server gave

function handle(error) {
  if (error instanceof Problem && ["not_authenticated", "session_ended"].includes(error.code)) return showLogin(error.message);
  fail(error);
}

// --- logging in -------------------------------------------------------------------------

function showLogin(message = "") {
  session.token = null;
  state.user = null;
  loads++; // what is still in flight is not shown
  myPrizes.stop();
  shelf.stop();
  feed.stop();
  checkout.stop();
  scheduled.stop();
  who.replaceChildren();
  notify(message, "error");
  const name = h("input", { id: "login-name", name: "name", autocomplete: "username", required: true });
  const password = h("input", { id: "login-password", name: "password", type: "password",
    autocomplete: "current-password", required: true });
  const form = h("form", { class: "login", "data-testid": "login" },
    h("label", { for: "login-name" }, t("login.name"), name),
    h("label", { for: "login-password" }, t("login.password"), password),
    h("div", { class: "row" },
      h("button", { class: "primary", type: "submit" }, t("login.log_in")),
      h("button", { type: "button", onclick: () => enter(name.value, password.value, true) }, t("login.register"))));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    enter(name.value, password.value, false);
  });
  app.replaceChildren(h("section", { class: "card login-card" }, h("h2", {}, t("login.title")), form));
}

async function enter(name, password, register) {
  const credentials = { name: name.trim(), password };
  if (!credentials.name || !password) return notify(t("login.missing"), "error");
  try {
    if (register) await api("/api/auth/register", { method: "POST", json: credentials });
    const answer = await api("/api/auth/login", { method: "POST", json: credentials });
    session.token = answer.token;
    notify(register ? t("login.welcome", { name: answer.user.id }) : "", "ok");
    await showPlayer(answer.user);
  } catch (error) {
    // The server's reason is in English: the rules it checks, in the page's language.
    if (register && error.code === "invalid_input") notify(t("login.rules"), "error");
    else fail(error);
  }
}

async function logout() {
  try {
    await api("/api/auth/logout", { method: "POST" });
  } catch {
    // the session may be gone already: logged out either way
  }
  showLogin();
  notify(t("login.logged_out"), "info");
}

// --- the page ---------------------------------------------------------------------------

function panel(name, title, wide = false) {
  slots[name] = h("div", { class: "slot" });
  return h("section", { class: `card ${wide ? "wide" : ""} ${name}-card`, "data-testid": `${name}-panel` },
    h("h2", {}, title), slots[name]);
}

async function showPlayer(user) {
  state.user = user;
  who.replaceChildren(h("span", {}, user.id), " ",
    h("button", { class: "link", "data-testid": "logout", onclick: logout }, t("login.log_out")));
  const chooser = h("select", { id: "activity", "data-testid": "activity", "aria-label": t("page.activity"),
    onchange: (event) => { location.hash = `#/activity/${event.target.value}`; } });
  app.replaceChildren(
    h("section", { class: "card wide chooser" }, h("label", { for: "activity" }, t("page.activity"), chooser),
      h("p", { class: "muted", id: "activity-about" })),
    feed.slot,
    h("section", { class: "card board-card", "data-testid": "board-panel" }, h("h2", {}, t("page.draw")),
      board.grid, board.result, scheduled.slot,
      h("a", { id: "receipt-link", "data-testid": "receipt-link", hidden: true }),
      h("div", { id: "join-code" }),
      h("p", { class: "muted", "data-testid": "draw-reason", id: "draw-reason" }),
      h("div", { id: "tiers" })),
    panel("chances", t("page.chances")), panel("points", t("page.points")),
    panel("odds", t("page.odds")), panel("prizes", t("page.prizes"), true),
    panel("content", t("page.content"), true), panel("orders", t("pay.orders"), true));
  shelf.start(slots.content).catch(handle);
  checkout.orders(slots.orders).catch(handle);
  state.activities = await api("/api/activities");
  chooser.replaceChildren(...state.activities.map((a) =>
    h("option", { value: a.id }, t("page.activity_option", { name: a.name, state: t(`activity_state.${a.state}`) }))));
  if (!state.activities.length) return notify(t("page.no_activity"), "info");
  await choose(hashActivity() ?? firstRunning());
}

function hashActivity() {
  const id = Number(/^#\/activity\/(\d+)$/.exec(location.hash)?.[1]);
  return state.activities.some((a) => a.id === id) ? id : null;
}

function firstRunning() {
  return (state.activities.find((a) => a.state === "running") ?? state.activities[0]).id;
}

async function choose(id) {
  document.getElementById("activity").value = String(id);
  if (location.hash !== `#/activity/${id}`) history.replaceState(null, "", `#/activity/${id}`);
  await load(id);
}

// Everything the page shows of the activity, read again after each draw, sign-in or purchase.
async function load(id) {
  const read = ++loads;
  const found = await Promise.all([
    api(`/api/activities/${id}`), api(`/api/activities/${id}/prizes`),
    api(`/api/activities/${id}/sign-ins`), api("/api/me/points"), api(`/api/activities/${id}/skus`),
  ]).catch((error) => {
    if (read === loads) throw error; // else a newer read (or the login form) took over
  });
  if (read !== loads) return;
  const [odds, mine, signIns, points, skus] = found;
  // Read only where the activity asks for one: most never do.
  const held = odds.activity.join_code_required ? await api(`/api/activities/${id}/join-code`) : null;
  if (read !== loads) return;
  Object.assign(state, { activity: odds.activity, odds, mine, signIns, points, skus, held });
  if (board.grid.dataset.activity !== String(id)) board.clear();
  board.grid.dataset.activity = String(id);
  document.getElementById("activity-about").textContent = odds.activity.description;
  document.title = `${odds.activity.name} · raffle`;
  renderJoinCode();
  renderBoard();
  renderChances();
  renderShop();
  slots.odds.replaceChildren(prizes.oddsTable(odds));
  feed.start(odds.activity); // read again now: after a draw, its win shows at once
  scheduled.start(odds.activity);
  await myPrizes.start(slots.prizes, new Map(state.activities.map((a) => [a.id, a.name])));
}

// --- rendering ----------------------------------------------------------------------------

function renderBoard() {
  board.render(boardItems(state.mine, state.odds));
  const titles = new Map(state.mine.prizes.map((p) => [p.award_id, p.title]));
  document.getElementById("tiers").replaceChildren(tiers(state.mine, titles));
  renderDrawButton();
}

function renderJoinCode() {
  document.getElementById("join-code").replaceChildren(engage.joinCode(state.activity, state.held, onRedeem));
}

// Off while a draw is in flight, whatever else is read again meanwhile.
function renderDrawButton() {
  const wait = Math.ceil((drawsFrom - Date.now()) / 1000);
  const noCode = state.activity.join_code_required && !state.held?.code;
  const atSetTime = state.activity.kind === "scheduled" ? t("scheduled.no_draw") : null;
  const why = atSetTime ?? engage.whyNoDraw(state.activity, state.mine.account) ??
    (noCode ? t("problem.join_code_required") : null) ??
    (wait > 0 ? t("draw.wait", { n: wait }) : null);
  board.button.disabled = drawing || Boolean(why);
  document.getElementById("draw-reason").textContent = why ?? "";
}

function renderChances() {
  const open = !engage.whyClosed(state.activity);
  slots.chances.replaceChildren(engage.chancesCard(state.mine.account),
    h("h3", {}, t("sign_in.title")), engage.signInButton(state.signIns, open, onSignIn),
    engage.calendar(state.signIns));
  renderDrawButton();
}

function renderShop() {
  const open = !engage.whyClosed(state.activity);
  const available = state.points.balance.available;
  slots.points.replaceChildren(engage.pointsLine(state.points),
    engage.shop(state.skus, available, open, onBuy));
}

function refresh() {
  return load(state.activity.id);
}

// --- actions ------------------------------------------------------------------------------

// One Idempotency-Key per click (api.js makes it), and the button off until the answer is
// in: a double click draws once.
async function onDraw() {
  if (drawing || board.button.disabled) return;
  drawing = true;
  board.button.disabled = true;
  notify("");
  board.start();
  let ok = false;
  try {
    const won = await drawn(await api(`/api/activities/${state.activity.id}/draws`, { method: "POST" }));
    await board.stop(won.award_id, won.award_title);
    // The campaign's win tips for the prize (seed 004 award_tips), shown as written.
    const tips = state.mine?.prizes.find((p) => p.award_id === won.award_id)?.card?.win_tips;
    notify([t("draw.won", { title: won.award_title }), tips].filter(Boolean).join(" "), "ok");
    showReceipt(won);
    ok = true;
  } catch (error) {
    if (error.code === "rate_limited") holdDraws(error.retryAfter ?? 1);
    handle(error);
  }
  drawing = false;
  if (session.token) await refresh().catch(handle);
  board.done(ok);
}

// A queued activity answers a draw with a ticket (202): polled until it is drawn, its answer
// then the draw's own (a refusal is thrown as the draw's would be). docs/queued-draws.md
async function drawn(answer) {
  let now = answer;
  while (now.ticket !== undefined) {
    if (now.state === "queued") {
      document.getElementById("draw-reason").textContent = t("draw.queued", { n: now.position });
      await new Promise((done) => setTimeout(done, 1000));
    }
    now = await api(`/api/activities/${now.activity_id}/tickets/${now.ticket}`);
  }
  return now;
}

// The draw's receipt opens on the verify page (verify.js), which checks it once its seed is out.
function showReceipt(won) {
  const link = document.getElementById("receipt-link");
  if (!link || !won.receipt) return;
  link.href = `/verify#order/${won.order_id}`;
  link.textContent = t("draw.receipt");
  link.hidden = false;
}

function holdDraws(seconds) {
  drawsFrom = Date.now() + seconds * 1000;
  setTimeout(() => state.mine && renderDrawButton(), seconds * 1000 + 50);
}

async function onSignIn(event) {
  event.target.disabled = true;
  try {
    const done = await api(`/api/activities/${state.activity.id}/sign-in`, { method: "POST" });
    const gifts = [done.rebate.points && t("sign_in.points", { n: done.rebate.points }),
      done.rebate.sku && t("sign_in.chances")].filter(Boolean);
    notify(done.granted ? t("sign_in.granted", { gifts: list(gifts), streak: done.streak })
      : t("sign_in.already"), "ok");
    await refresh();
  } catch (error) {
    handle(error);
  }
}

async function onRedeem(code, form) {
  if (!code) return;
  for (const button of form.querySelectorAll("button")) button.disabled = true;
  try {
    const bound = await api(`/api/activities/${state.activity.id}/join-code`, { method: "POST", json: { code } });
    notify(t("code.held", { code: bound.code }), "ok");
    await refresh();
  } catch (error) {
    handle(error);
    for (const button of form.querySelectorAll("button")) button.disabled = false;
  }
}

async function onBuy(sku) {
  for (const button of slots.points.querySelectorAll("button")) button.disabled = true;
  try {
    await api("/api/me/points/exchanges", { method: "POST", json: { sku: sku.sku } });
    notify(t("shop.bought", { n: sku.total, points: sku.price_points }), "ok");
    await refresh();
  } catch (error) {
    handle(error);
    if (session.token) renderShop();
  }
}

async function onSaveAddress(draw, form) {
  prizes.showFieldErrors(form, []);
  try {
    await api(`/api/me/prizes/${draw.order_id}/address`, { method: "PUT", json: prizes.addressOf(form) });
    delete form.dataset.dirty;
    notify(t("address.saved", { title: draw.award_title }), "ok");
    await myPrizes.load();
  } catch (error) {
    prizes.showFieldErrors(form, error.errors ?? []);
    handle(error);
  }
}

// A coupon prize claimed: its code is shown in the list read again.
async function onClaim(draw) {
  try {
    await api(`/api/me/prizes/${draw.order_id}/claim`, { method: "POST" });
    notify(t("claim.done", { title: draw.award_title }), "ok");
    await myPrizes.load();
  } catch (error) {
    handle(error);
  }
}

window.addEventListener("hashchange", () => {
  const id = hashActivity();
  if (session.token && id && id !== state.activity?.id) choose(id).catch(handle);
});

// The language switch: each offered language in its own name.
function languageSwitch() {
  const select = h("select", { class: "language", "data-testid": "language", "aria-label": t("page.language"),
    onchange: (event) => switchLanguage(event.target.value) },
  offered.map((code) => h("option", { value: code, selected: code === language }, ownName(code))));
  document.querySelector("select.language")?.remove();
  header.append(select);
}

// The page drawn again in `code`; what the player typed into a form is not kept.
async function switchLanguage(code) {
  try {
    await chooseLanguage(code);
  } catch (error) {
    return fail(error);
  }
  languageSwitch();
  notify("");
  if (!state.user) return showLogin();
  board.button.textContent = t("board.draw");
  await showPlayer(state.user).catch(handle);
}

async function boot() {
  languageSwitch();
  if (!session.token) return showLogin();
  try {
    await showPlayer(await api("/api/auth/me"));
  } catch (error) {
    handle(error);
  }
}

boot();
