// The one door to the API for both pages: the session token, idempotency keys, and problems
// (RFC 9457 bodies with a stable `code`) turned into messages a person can act on.

import { has, t } from "/web/i18n.js";

const TOKEN = "raffle.token";

export const session = {
  get token() {
    return localStorage.getItem(TOKEN);
  },
  set token(value) {
    if (value) localStorage.setItem(TOKEN, value);
    else localStorage.removeItem(TOKEN);
  },
};

// What a player or operator should read for each code the API answers with is the catalogue's
// "problem.<code>"; the server's own `detail` is shown for the rest (it names the field or the
// state).
export class Problem extends Error {
  constructor(status, body) {
    const code = body.code ?? "http_error";
    // A draw no policy admits: each policy's reason, in words, once each.
    const reasons = [...new Set((body.refusals ?? []).map((r) => t(`refusal.${r.reason}`)))];
    super(has(`problem.${code}`) ? t(`problem.${code}`, { reasons: reasons.join("; ") })
      : body.detail ?? t("problem.http", { n: status }));
    this.status = status;
    this.code = code;
    this.detail = body.detail ?? "";
    this.errors = body.errors ?? []; // [{at: "strategies.0.prizes.1.rate", message}]
    this.retryAfter = body.retry_after;
    this.currentState = body.current_state; // a refused workflow step: the state it is in
    this.refusals = body.refusals ?? []; // a draw not admitted: [{policy_id, reason}]
  }
}

export function newKey() {
  return crypto.randomUUID();
}

// `key`: an Idempotency-Key, so a retry (or a double click) cannot act twice. Every
// state-changing call gets one; pass your own to make two calls the same request.
// `text` is sent as `type` (a campaign file's YAML unless told); `form` (FormData) as
// multipart, its boundary set by the browser.
export async function api(path, { method = "GET", json, text, form, type = "application/yaml", key } = {}) {
  const headers = {};
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  if (method !== "GET") headers["Idempotency-Key"] = key ?? newKey();
  let body;
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(json);
  } else if (text !== undefined) {
    headers["Content-Type"] = type;
    body = text;
  } else if (form !== undefined) {
    body = form;
  }
  let answer;
  try {
    answer = await fetch(path, { method, headers, body });
  } catch {
    throw new Problem(0, { code: "network" });
  }
  if (answer.status === 204) return null;
  const answered = answer.headers.get("content-type") ?? "";
  const data = answered.includes("json") ? await answer.json() : await answer.text();
  if (!answer.ok) {
    const problem = new Problem(answer.status, typeof data === "object" ? data : {});
    if (problem.code === "not_authenticated" || problem.code === "session_ended") session.token = null;
    throw problem;
  }
  return data;
}

// A tiny element builder: h("button", {class: "primary", onclick}, "Draw").
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  node.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

// One line of status at the top of a page: role=status for news, role=alert for errors.
export function notify(message, kind = "info") {
  const bar = document.getElementById("notice");
  bar.textContent = message;
  bar.className = `notice ${kind}`;
  bar.setAttribute("role", kind === "error" ? "alert" : "status");
  bar.hidden = !message;
}

export function fail(error) {
  notify(error instanceof Problem ? error.message : String(error), "error");
}
