// What keeps a player drawing: chances left, the daily sign-in with its calendar and streak,
// points and the shop that turns them into chances.
//
// Stable hooks for tests: [data-testid=chances] (data-chances, data-total-left,
// data-day-left, data-month-left), [data-testid=sign-in] (the button), [data-testid=calendar]
// (cells [data-day], class "signed" / "today"), [data-testid=streak] (data-streak),
// [data-testid=points] (data-available), [data-testid=sku] rows (data-sku) with a "Buy" button,
// [data-testid=join-code] the join code held (data-code) or the form to redeem one.
import { h } from "/web/api.js";
import { t } from "/web/i18n.js";

// Why the activity takes no draw, sign-in or purchase now, or null when it is open.
export function whyClosed(activity) {
  const now = Date.now();
  if (activity.state !== "running") return t("closed.now");
  if (now < Date.parse(activity.begin_at)) return t("closed.not_started");
  if (now >= Date.parse(activity.end_at)) return t("closed.ended");
  return null;
}

// Why the draw button is off, or null when a draw may go ahead.
export function whyNoDraw(activity, account) {
  const closed = whyClosed(activity);
  if (closed) return closed;
  if (!account || account.chances > 0) return null;
  if (account.total_left <= 0) return t("no_draw.none_left");
  if (account.day_left <= 0) return t("no_draw.day_used");
  return t("no_draw.month_used");
}

// The join code an activity requires: the player's, or a form to redeem one.
export function joinCode(activity, held, onRedeem) {
  if (!activity.join_code_required) return h("div", { "data-testid": "join-code", hidden: true });
  if (held?.code) {
    return h("p", { "data-testid": "join-code", "data-code": held.code }, t("code.held", { code: held.code }));
  }
  const input = h("input", { id: "join-code-input", name: "code", autocomplete: "off", required: true,
    maxlength: 64, placeholder: t("code.placeholder") });
  const form = h("form", { class: "row", "data-testid": "join-code" },
    h("label", { for: "join-code-input" }, t("code.title"), input),
    h("button", { class: "primary", type: "submit" }, t("code.redeem")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    onRedeem(input.value.trim(), form);
  });
  return form;
}

export function chancesCard(account) {
  const stat = (label, value, id) => h("div", { class: "stat" },
    h("strong", { "data-testid": id }, String(value)), h("span", { class: "muted" }, label));
  return h("div", {
    class: "stats", "data-testid": "chances",
    dataset: { chances: account.chances, totalLeft: account.total_left,
      dayLeft: account.day_left, monthLeft: account.month_left },
  },
  stat(t("chances.now"), account.chances, "chances-now"),
  stat(t("chances.total"), account.total_left, "chances-total"),
  stat(t("chances.today"), account.day_left, "chances-today"),
  stat(t("chances.month"), account.month_left, "chances-month"));
}

// A month as a calendar, Monday first; signed days marked, today outlined.
export function calendar(signIns) {
  const [year, month] = signIns.month.split("-").map(Number);
  const first = (new Date(year, month - 1, 1).getDay() + 6) % 7;
  const length = new Date(year, month, 0).getDate();
  const today = signIns.today.startsWith(signIns.month) ? Number(signIns.today.slice(8)) : 0;
  const signed = new Set(signIns.days);
  const cells = t("calendar.weekdays").split(" ").map((d) => h("span", { class: "dow" }, d));
  for (let i = 0; i < first; i++) cells.push(h("span", {}));
  for (let d = 1; d <= length; d++) {
    const classes = [signed.has(d) && "signed", d === today && "today"].filter(Boolean).join(" ");
    const date = `${signIns.month}-${String(d).padStart(2, "0")}`;
    cells.push(h("span", { class: `day ${classes}`, "data-day": d,
      "aria-label": signed.has(d) ? t("calendar.day_signed", { date }) : t("calendar.day", { date }) }, String(d)));
  }
  return h("div", {},
    h("div", { class: "calendar", "data-testid": "calendar", "data-month": signIns.month }, cells),
    h("p", { "data-testid": "streak", "data-streak": signIns.streak },
      t("calendar.streak", { n: signIns.streak })));
}

export function signInButton(signIns, open, onSignIn) {
  const done = signIns.signed_today;
  return h("button", {
    class: "primary", "data-testid": "sign-in", disabled: done || !open, onclick: onSignIn },
    done ? t("sign_in.done") : t("sign_in.button"));
}

export function pointsLine(points) {
  return h("p", { "data-testid": "points", "data-available": points.balance.available },
    h("strong", {}, t("points.available", { n: points.balance.available })), " ",
    h("span", { class: "muted" }, t("points.earned", { n: points.balance.total })));
}

// The shop: a SKU the balance cannot pay or that is sold out cannot be bought (no 409 asked for).
export function shop(skus, available, open, onBuy) {
  if (!skus.length) return h("p", { class: "muted" }, t("shop.empty"));
  if (!open) return h("p", { class: "muted" }, t("shop.closed"));
  return h("ul", { class: "shop" }, skus.map((s) => {
    const short = available < s.price_points;
    const out = s.stock_left <= 0;
    return h("li", { "data-testid": "sku", "data-sku": s.sku },
      h("span", {}, h("strong", {}, t("shop.chances", { n: s.total })), " ",
        h("span", { class: "muted" }, t("shop.limits", { day: s.day, month: s.month, left: s.stock_left }))),
      h("button", { disabled: short || out, title: out ? t("shop.sold_out") : short ? t("shop.short") : "",
        onclick: () => onBuy(s) }, t("shop.buy", { n: s.price_points })));
  }));
}
