// The words of the pages, one catalogue per language (web/i18n/<language>.json). A page
// offers its languages in <html data-languages="en zh">; without it (the console) it is in
// English. The language is the player's choice (remembered), else the browser's first
// offered one, else English. Campaign texts (titles, names) are shown as written.
//
// A catalogue maps a key to a text with {name} holes, or to its plural forms by
// Intl.PluralRules category ({"one": …, "other": …}) chosen by the hole {n}.

const CHOSEN = "raffle.language";
const FIRST = "en";

export const offered = document.documentElement.dataset.languages?.split(" ") ?? [FIRST];

function fromBrowser() {
  const kept = localStorage.getItem(CHOSEN);
  if (offered.includes(kept)) return kept;
  const wanted = navigator.languages.map((tag) => tag.split("-")[0].toLowerCase());
  return wanted.find((code) => offered.includes(code)) ?? FIRST;
}

async function read(code) {
  const answer = await fetch(`/web/i18n/${code}.json`);
  if (!answer.ok) throw new Error(`no catalogue for ${code}: HTTP ${answer.status}`);
  return answer.json();
}

export let language = fromBrowser();
let words = await read(language);
let plurals = new Intl.PluralRules(language);

// Switch to `code`, remembered in this browser; the caller draws the page again.
export async function choose(code) {
  words = await read(code);
  language = code;
  plurals = new Intl.PluralRules(code);
  localStorage.setItem(CHOSEN, code);
  document.documentElement.lang = code;
}

document.documentElement.lang = language;

// The text of `key` with its holes filled from `values`; a missing key is a bug, reported in
// the console (the browser tests fail on it) and shown as the key.
export function t(key, values = {}) {
  let text = words[key];
  if (text !== null && typeof text === "object") text = text[plurals.select(values.n)] ?? text.other;
  if (typeof text !== "string") {
    console.error(`no text for "${key}" in ${language}`);
    return key;
  }
  return text.replace(/\{(\w+)\}/g, (hole, name) => String(values[name] ?? hole));
}

export const has = (key) => key in words;

// "a, b and c" in the page's language.
export const list = (items) => new Intl.ListFormat(language).format(items);

// A language's own name for itself ("English", "中文") for the switch.
export const ownName = (code) => new Intl.DisplayNames([code], { type: "language" }).of(code);

// Date and time as the page's language writes them, in the browser's time zone.
export const dateTime = (at) => new Date(at).toLocaleString(language);
