// A prize's claim terms in the campaign editor (a prize's `claim:` in campaign files): how
// long a won prize may be claimed, and the profile fields its winner needs first.

import { h } from "/web/api.js";
import { choice, field, integer, optionalText } from "/web/console-fields.js";

const KINDS = [["activity", "until the activity ends"], ["fixed", "from a day to a day"], ["days", "days from the win"]];

// Drop what is empty, so a prize without terms writes no `claim:`.
function tidy(p) {
  const c = p.claim;
  if (c && !c.validity && !(c.conditions ?? []).length) delete p.claim;
}

// The fields of `p.claim` at document path `at` (the prize's); `rerender` after the kind
// changes, which shows the kind's own fields.
export function claimFields(p, at, rerender) {
  const claim = () => (p.claim ??= {});
  const v = p.claim?.validity;
  const set = (key) => (value) => {
    if (value === undefined) delete claim().validity[key];
    else claim().validity[key] = value;
  };
  const kind = choice("Claim within", `${at}.claim.validity.kind`, v?.kind ?? "", (value) => {
    if (value) claim().validity = { kind: value };
    else if (p.claim) delete p.claim.validity;
    tidy(p);
    rerender();
  }, () => KINDS, { optional: "no deadline", read: (value) => value });
  const own = !v ? [] : v.kind === "fixed" ? [
    field("First day", `${at}.claim.validity.first`, v.first, set("first"), { type: "date", read: optionalText }),
    field("Last day", `${at}.claim.validity.last`, v.last, set("last"), { type: "date", read: optionalText }),
  ] : v.kind === "days" ? [
    field("Days", `${at}.claim.validity.days`, v.days, set("days"), { type: "number", read: integer, hint: "7" }),
    field("Starting days later", `${at}.claim.validity.later`, v.later, set("later"), { type: "number", read: integer, hint: "0" }),
  ] : [];
  const conditions = field("Claim needs (profile fields)", `${at}.claim.conditions`, (p.claim?.conditions ?? []).join(", "), (value) => {
    const names = (value ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    claim().conditions = names;
    tidy(p);
  }, { hint: "phone, region, attrs.member", read: (value) => value });
  return h("div", { class: "row claim", dataset: { at: `${at}.claim` } }, kind, ...own, conditions);
}
