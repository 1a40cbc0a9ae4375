// The review workflow of an activity: the steps its state allows, each a POST; a step the
// server refuses (someone moved it meanwhile) shows the state it is really in.

import { api, h, notify } from "/web/api.js";
import { report } from "/web/console-fields.js";

const STEPS = {
  edit: ["submit"],
  submitted: ["approve", "refuse"],
  refused: ["edit"],
  approved: ["start"],
  running: ["close"],
  closed: ["reopen"],
};
const LABELS = { submit: "Submit for review", approve: "Approve", refuse: "Refuse", edit: "Back to editing", start: "Start", close: "Close", reopen: "Reopen" };

// moved(state): called with the activity's new (or actual) state.
export function workflowButtons(activity, moved) {
  return (STEPS[activity.state] ?? []).map((action) =>
    h("button", {
      dataset: { testid: `act-${activity.id}-${action}` },
      class: action === "start" || action === "approve" ? "primary" : undefined,
      onclick: (event) => step(activity, action, moved, event.currentTarget),
    }, LABELS[action]));
}

async function step(activity, action, moved, button) {
  button.disabled = true;
  try {
    const updated = await api(`/api/admin/activities/${activity.id}/${action}`, { method: "POST" });
    notify(`Activity ${activity.id} is ${updated.state} now.`, "ok");
    moved(updated.state);
  } catch (error) {
    button.disabled = false;
    const now = error.currentState;
    if (!now) return report(error);
    notify(`Not done: activity ${activity.id} is ${now} now (${error.message}).`, "error");
    moved(now);
  }
}
