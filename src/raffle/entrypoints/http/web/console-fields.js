// Form fields bound to a place in the campaign document, and the API's problems shown next
// to them: every field carries the document path the server names (`data-at`), e.g.
// "strategies.0.prizes.1.rate", so an error's `at` finds its field, or the nearest part.

import { fail, h } from "/web/api.js";

const idOf = (at) => `f-${at.replaceAll(".", "-")}`;

// A labelled input. `read` turns the text into the document's value (undefined: leave the
// key out); `write` stores it. Numbers stay exactly what the person typed until sent.
export function field(label, at, value, write, { type = "text", read = text, hint, wide, readonly } = {}) {
  const input = h("input", {
    id: idOf(at), name: at, type, value: value ?? "", placeholder: hint, readonly,
    dataset: { at }, inputmode: type === "number" ? "numeric" : undefined,
    oninput: (event) => write(read(event.target.value)),
  });
  return h("label", { class: wide ? "wide-field" : undefined }, label, input);
}

// A select of choices [[value, text]], refreshed from `choices()` whenever it is opened, so it
// lists awards or packs added since the form was drawn. `optional`: a "none" choice first.
export function choice(label, at, value, write, choices, { optional, read = integer } = {}) {
  const select = h("select", { id: idOf(at), name: at, dataset: { at } });
  const fill = () => {
    const current = select.value || String(value ?? "");
    const options = choices();
    if (current && !options.some(([v]) => String(v) === current)) options.push([current, `${current} (not in the campaign)`]);
    select.replaceChildren(
      ...(optional ? [h("option", { value: "" }, optional)] : []),
      ...options.map(([v, t]) => h("option", { value: String(v) }, t)),
    );
    select.value = current;
  };
  fill();
  select.addEventListener("focus", fill);
  select.addEventListener("pointerdown", fill);
  select.addEventListener("change", () => write(read(select.value)));
  return h("label", {}, label, select);
}

export const text = (v) => v;
export const optionalText = (v) => (v.trim() === "" ? undefined : v);
// Whole numbers as numbers; anything else is sent as typed, for the server to name.
export function integer(v) {
  if (v.trim() === "") return undefined;
  return /^-?\d+$/.test(v.trim()) ? Number(v) : v;
}

export function clearProblems(root) {
  root.querySelectorAll(".field-error").forEach((n) => n.remove());
  root.querySelectorAll("[aria-invalid]").forEach((n) => n.removeAttribute("aria-invalid"));
}

// Each problem next to its field, or at the top of the nearest part that has a path; what
// matches nothing is returned. The first field marked gets the focus.
export function showProblems(root, problems) {
  const unplaced = [];
  let first = null;
  problems.forEach((problem, i) => {
    const target = nearest(root, problem.at ?? "");
    if (!target) return unplaced.push(problem);
    const note = h("span", { class: "field-error", id: `problem-${i}`, dataset: { for: problem.at } }, problem.message);
    if (target.matches("input, select, textarea")) {
      target.setAttribute("aria-invalid", "true");
      target.setAttribute("aria-describedby", note.id);
      target.after(note);
      first ??= target;
    } else {
      const legend = target.querySelector(":scope > legend, :scope > h3");
      if (legend) legend.after(note);
      else target.prepend(note);
      first ??= note;
    }
  });
  if (first) {
    first.scrollIntoView({ block: "center" });
    if (first.focus) first.focus({ preventScroll: true });
  }
  return unplaced;
}

function nearest(root, at) {
  const parts = at.split(".").filter(Boolean);
  while (parts.length) {
    const found = root.querySelector(`[data-at="${CSS.escape(parts.join("."))}"]`);
    if (found) return found;
    parts.pop();
  }
  return null;
}

export function nextId(items, key, start) {
  return Math.max(start - 1, ...items.map((item) => Number(item[key]) || 0)) + 1;
}

// An error shown in the notice bar; an expired session also sends the console to its login.
// The console's pick of one activity (the Codes and Policies tabs): `onPick` gets its id.
export function activityPicker(id, activities, selected, onPick, describe = (a) => `${a.id} · ${a.name} (${a.state})`) {
  const pick = h("select", { id, "aria-label": "Activity", onchange: () => onPick(Number(pick.value)) },
    ...activities.map((a) => h("option", { value: String(a.id), selected: a.id === selected }, describe(a))));
  return pick;
}

export function report(error) {
  fail(error);
  if (error?.code === "not_authenticated" || error?.code === "session_ended") document.dispatchEvent(new CustomEvent("session-expired", { detail: error.message }));
}
