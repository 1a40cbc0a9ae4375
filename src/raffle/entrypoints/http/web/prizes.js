// After the draw: my prizes with their delivery, the shipping address of physical prizes, and
// the published odds of the activity (my-prizes.js reads the list and keeps it current).
//
// Stable hooks for tests: [data-testid=my-prize] items (data-order, data-state) with
// [data-testid=delivery] (the delivery in words), [data-testid=more-prizes] (the next,
// older page; there while there is one) and, for physical prizes, a form
// [data-testid=address] whose fields are labelled Recipient, Phone, Region, Address,
// Postcode; [data-testid=odds] is the odds table (rows [data-award]). A prize with claim terms
// has [data-testid=claim] (data-claim: not_yet, open, claimed or expired) and, for a coupon
// not claimed yet, a button [data-testid=claim-prize].
import { h } from "/web/api.js";
import { cardParts } from "/web/board.js";
import { dateTime, list, t } from "/web/i18n.js";

const TONES = { completed: "ok", failed: "bad" };
// [field, autocomplete]; the label is the catalogue's "address.<field>".
const FIELDS = [
  ["name", "name"],
  ["phone", "tel"],
  ["region", "address-level1"],
  ["line", "street-address"],
  ["postcode", "postal-code"],
];

// What the delivery left, in words.
function delivered(draw) {
  const d = draw.delivery;
  if (draw.award_kind === "points" || draw.award_kind === "random_points") {
    return draw.points ? t("delivery.points", { n: draw.points }) : t("delivery.some_points");
  }
  if (!d) return draw.award_kind === "chances" ? t("delivery.chances") : "";
  if (d.coupon_code) return t("delivery.code", { code: d.coupon_code });
  if (d.content_id) return t("delivery.content", { content: d.content_id });
  if (d.shipment) {
    const s = d.shipment;
    const state = t(`shipment.${s.state}`);
    return s.tracking ? t("shipment.tracked", { state, tracking: s.tracking }) : state;
  }
  return draw.award_kind === "physical" ? t("shipment.awaiting_address") : "";
}

// The profile fields a prize may ask for, in words; a free attribute (attrs.<name>) by name.
const FIELD_NAMES = {
  phone: () => t("claim.phone"),
  gender: () => t("claim.gender"),
  birth_date: () => t("claim.birth_date"),
  region: () => t("claim.region"),
  channel: () => t("claim.channel"),
  sn: () => t("claim.sn"),
};
const fieldName = (name) => FIELD_NAMES[name]?.() ?? name.replace(/^attrs\./, "");

// Where the prize's claim stands, in words: until when, and what the profile misses.
function claimText(claim) {
  const until = claim.valid_until ? dateTime(claim.valid_until) : null;
  const texts = {
    not_yet: () => t("claim.not_yet", { from: dateTime(claim.valid_from) }),
    open: () => (until ? t("claim.until", { until }) : t("claim.open")),
    claimed: () => t("claim.claimed"),
    expired: () => t("claim.expired", { until: until ?? "" }),
  };
  const said = [texts[claim.state]()];
  if (claim.missing.length) said.push(t("claim.missing", { fields: claim.missing.map(fieldName).join(", ") }));
  return said.join(" · ");
}

function claimLine(draw, onClaim) {
  const claim = draw.delivery?.claim;
  if (!claim) return null;
  const canClaim = draw.award_kind === "coupon" && claim.state === "open";
  return h("div", { class: claim.state === "expired" ? "muted claim expired" : "claim", "data-testid": "claim", "data-claim": claim.state },
    claimText(claim),
    canClaim ? h("button", { class: "primary", "data-testid": "claim-prize", onclick: () => onClaim(draw) }, t("claim.claim")) : null);
}

function addressForm(draw, onSave) {
  const current = draw.delivery?.shipment?.address ?? {};
  const form = h("form", { class: "address", "data-testid": "address", novalidate: true });
  for (const [field, autocomplete] of FIELDS) {
    const id = `${draw.order_id}-${field}`;
    form.append(h("label", { for: id }, t(`address.${field}`),
      h("input", { id, name: field, autocomplete, value: current[field] ?? "" }),
      h("span", { class: "field-error", "data-for": field })));
  }
  form.append(h("button", { class: "primary", type: "submit" }, t("address.save")));
  // A form being filled in survives the list being read again (see myPrizes).
  form.addEventListener("input", () => { form.dataset.dirty = "true"; });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    onSave(draw, form);
  });
  return form;
}

// Show `problem.errors` ({at: "name" or "body.name", message}) next to their fields.
export function showFieldErrors(form, errors) {
  for (const input of form.querySelectorAll("input")) input.removeAttribute("aria-invalid");
  for (const span of form.querySelectorAll(".field-error")) span.textContent = "";
  for (const { at, message } of errors) {
    const field = String(at).split(".").pop();
    const span = form.querySelector(`.field-error[data-for="${field}"]`);
    if (!span) continue;
    span.textContent = message;
    form.querySelector(`input[name="${field}"]`).setAttribute("aria-invalid", "true");
  }
}

export function addressOf(form) {
  return Object.fromEntries(FIELDS.map(([field]) => [field, form.elements[field].value.trim()]));
}

function prizeItem(draw, names, onSave, editing, onClaim) {
  const state = t(`prize_state.${draw.state}`);
  const tone = TONES[draw.state] ?? "";
  // An address is the claim of a physical prize: not asked for outside its validity.
  const closed = ["expired", "not_yet"].includes(draw.delivery?.claim?.state);
  const shipping = draw.award_kind === "physical" && draw.delivery?.shipment?.state !== "shipped" && !closed;
  return h("li", { "data-testid": "my-prize", "data-order": draw.order_id, "data-state": draw.state },
    h("div", { class: "prize-line" },
      ...cardParts(draw.card, draw.award_title),
      h("strong", {}, draw.award_title),
      h("span", { class: `badge ${tone}`, "data-testid": "state" }, state)),
    h("div", { class: "muted" },
      `${names.get(draw.activity_id) ?? draw.activity_id} · ${dateTime(draw.created_at)} · `,
      h("span", { "data-testid": "delivery" }, delivered(draw))),
    claimLine(draw, onClaim),
    shipping ? editing.get(draw.order_id) ?? h("details", { open: !draw.delivery?.shipment?.address },
      h("summary", {}, t("address.title")), addressForm(draw, onSave)) : null);
}

// `shown`: the list on the page now, whose address forms with unsaved input are kept as they
// are (the list is read again while deliveries are under way). `onMore`: read the next page;
// `onClaim(draw)`: claim a coupon prize (its code is shown once claimed).
export function prizeList(prizes, names, onSave, shown, onMore, onClaim) {
  if (!prizes.draws.length) return h("p", { class: "muted" }, t("prizes.none"));
  const editing = new Map([...shown.querySelectorAll("[data-testid=my-prize]")]
    .filter((item) => item.querySelector("form[data-dirty]"))
    .map((item) => [item.dataset.order, item.querySelector("details")]));
  return h("div", {},
    h("ul", { class: "my-prizes" }, prizes.draws.map((d) => prizeItem(d, names, onSave, editing, onClaim))),
    prizes.next ? h("button", { class: "more", "data-testid": "more-prizes", onclick: onMore }, t("prizes.more")) : null);
}

export const percent = (rate) => `${(Number(rate) * 100).toFixed(4).replace(/\.?0+$/, "")}%`;

// An exact fraction ("1/3") as the API publishes a 100 % win activity's chances.
const ratio = (text) => text.split("/").map(Number).reduce((a, b) => a / b);

export function oddsTable(odds) {
  const caps = odds.activity.caps;
  const chance = (p) => (caps.perfect_activity ? percent(ratio(p.perfect_chance ?? "0")) : percent(p.rate));
  const rows = odds.prizes.map((p) => h("tr", { "data-award": p.award_id },
    h("td", {}, p.title), h("td", {}, chance(p)),
    h("td", {}, p.stock === null ? t("odds.unlimited") : `${p.stock_left ?? "?"} / ${p.stock}`),
    h("td", {}, p.lock_after ? t("odds.from_draw", { n: p.lock_after }) : "")));
  if (!caps.perfect_activity && Number(odds.fallback_rate) > 0 && !odds.prizes.some((p) => p.award_id === odds.fallback_award_id)) {
    rows.push(h("tr", { "data-award": odds.fallback_award_id },
      h("td", {}, odds.fallback_title), h("td", {}, percent(odds.fallback_rate)),
      h("td", {}, t("odds.unlimited")), h("td", {})));
  }
  return h("div", { class: "scroll" }, h("table", { "data-testid": "odds" },
    h("thead", {}, h("tr", {}, [t("odds.prize"), t("odds.chance"), t("odds.stock"), t("odds.locked")].map((text) => h("th", {}, text)))),
    h("tbody", {}, rows)), capsNotes(odds), rulesNotes(odds));
}

// Listed users and guarantees, in the order they run: every rule that changes an outcome is
// published, in words, with the chance of each guaranteed prize.
function rulesNotes(odds) {
  const chances = (rule) => new Map(rule.chances.map((c) => [c.award_id, percent(ratio(c.chance))]));
  const notes = odds.rules.map((rule) => {
    if (rule.rule === "listed") {
      return t("odds.listed", { n: rule.users, prize: rule.titles[0], fallback: odds.fallback_title });
    }
    const chance = chances(rule);
    const names = rule.titles.map((title, i) => (chance.has(rule.award_ids[i]) ? `${title} (${chance.get(rule.award_ids[i])})` : title));
    const words = { n: rule.draw, level: rule.level, names: list(names) };
    const text = rule.level === null
      ? (rule.draw === 1 ? t("odds.guarantee_first", words) : t("odds.guarantee", words))
      : (rule.draw === 1 ? t("odds.guarantee_first_level", words) : t("odds.guarantee_level", words));
    return rule.in_force ? text : `${text} ${t("odds.guarantee_gone")}`;
  });
  return notes.length ? h("ul", { class: "muted", "data-testid": "rules" }, notes.map((note) => h("li", {}, note))) : null;
}

// The caps that can change an outcome, said with the odds: nothing hidden.
function capsNotes(odds) {
  const caps = odds.activity.caps;
  const notes = [];
  if (caps.perfect_activity) notes.push(t("odds.perfect", { fallback: odds.fallback_title }));
  if (caps.award_num_limit !== null) {
    notes.push(t("odds.cap_winners", { n: caps.award_num_limit, left: odds.winners_left ?? "?", fallback: odds.fallback_title }));
  }
  if (caps.join_people_total_limit !== null) {
    notes.push(t("odds.cap_participants", { n: caps.join_people_total_limit, left: odds.participants_left ?? "?" }));
  }
  return notes.length ? h("ul", { class: "muted", "data-testid": "caps" }, notes.map((note) => h("li", {}, note))) : null;
}
