// A scheduled activity on the player page (docs/scheduled-draws.md): its draw time and cutoff
// with a countdown on the server's clock, the Enter button (one Idempotency-Key per click;
// entering again answers the same entrance), the frozen list's size and hash, and after the
// draw the player's outcome with a link to the draw's public record, what
// `raffle verify-draw` checks the winners by.
//
// Stable hooks for tests: [data-testid=scheduled] (data-stage = open | frozen | drawn,
// data-entered = yes | no) with [data-testid=countdown], [data-testid=enter],
// [data-testid=entrants] (data-hash), [data-testid=outcome] (data-won = the award ids) and
// [data-testid=verify-draw].
import { Problem, api, h, notify } from "/web/api.js";
import { dateTime, t } from "/web/i18n.js";

const POLL_MS = 2000; // how often the entrance is read again around the cutoff and draw time

export class ScheduledEntry {
  // `titles(awardId)`: a prize's title; `onError(error)`: the page's handler; `onDrawn()`:
  // the draw seen happening, so the page reads the player's prizes again.
  constructor(titles, onError, onDrawn) {
    Object.assign(this, { titles, onError, onDrawn, reads: 0, timer: null, skew: 0, slot: h("div", { hidden: true }) });
  }

  // Start (or restart) on an activity; an instant one hides the card.
  start(activity) {
    this.stop();
    if (activity?.kind !== "scheduled") return;
    // `seen`: the stage last shown; `entrance` undefined until read, null if not entered.
    Object.assign(this, { activity, record: null, entrance: undefined, seen: null });
    this.slot.hidden = false;
    this.read(++this.reads).catch((error) => this.onError(error));
  }

  stop() {
    this.reads++;
    clearInterval(this.timer);
    this.timer = null;
    this.slot.hidden = true;
  }

  // The server's clock, as this browser's plus the skew measured from its Date header.
  now() {
    return Date.now() + this.skew;
  }

  async read(run) {
    const id = this.activity.id;
    // One who had not entered by the cutoff never will: not asked again (a 404 each time).
    const out = this.entrance === null && this.record && this.now() >= Date.parse(this.record.cutoff);
    const [record, entrance] = await Promise.all([this.readRecord(id), out ? null : this.readEntrance(id)]);
    if (run !== this.reads) return;
    Object.assign(this, { record, entrance });
    this.render();
    const was = this.seen;
    this.seen = this.stage();
    // The winners' orders are written to their shards just after the reveal: read a poll later.
    if (was && was !== "drawn" && this.seen === "drawn") setTimeout(() => run === this.reads && this.onDrawn(), POLL_MS);
    clearInterval(this.timer);
    this.timer = setInterval(() => this.tick(run), 1000);
  }

  // The public record, read with fetch for its Date header: the countdown runs on the
  // server's clock whatever the browser's says.
  async readRecord(id) {
    const sent = Date.now();
    const answer = await fetch(`/api/activities/${id}/scheduled-draw`);
    const body = await answer.json();
    if (!answer.ok) throw new Problem(answer.status, body);
    const said = Date.parse(answer.headers.get("date") ?? "");
    // A Date header is to the second: its middle, against the middle of the round trip.
    if (!Number.isNaN(said)) this.skew = said + 500 - (sent + Date.now()) / 2;
    return body;
  }

  async readEntrance(id) {
    try {
      return await api(`/api/activities/${id}/entry`);
    } catch (error) {
      if (error.code === "not_entered") return null;
      throw error;
    }
  }

  // Every second the countdown; every few, while the list or the winners are still to
  // come and their time has passed, the record and the entrance again.
  tick(run) {
    if (run !== this.reads) return;
    const stage = this.stage();
    if (stage === "drawn") return clearInterval(this.timer); // nothing more to come
    const due = stage === "open" ? this.record.cutoff : this.record.draw_at;
    const waiting = stage !== "drawn" && this.now() >= Date.parse(due);
    if (waiting && !this.polling && this.now() - (this.lastPoll ?? 0) >= POLL_MS) {
      this.polling = true;
      this.lastPoll = this.now();
      this.read(run).catch((error) => this.onError(error)).finally(() => { this.polling = false; });
      return;
    }
    this.countdown?.replaceChildren(this.countdownText());
  }

  stage() {
    if (this.record.drawn_at) return "drawn";
    return this.record.frozen_at ? "frozen" : "open";
  }

  countdownText() {
    const stage = this.stage();
    if (stage === "drawn") return t("scheduled.drawn_at", { at: dateTime(this.record.drawn_at) });
    const open = stage === "open" && this.now() < Date.parse(this.record.cutoff);
    const left = Math.max(0, Math.ceil((Date.parse(open ? this.record.cutoff : this.record.draw_at) - this.now()) / 1000));
    return open ? t("scheduled.closes_in", { time: clock(left) }) : t("scheduled.draws_in", { time: clock(left) });
  }

  render() {
    const r = this.record;
    const stage = this.stage();
    const entered = this.entrance !== null;
    const closed = stage !== "open" || this.now() >= Date.parse(r.cutoff);
    this.countdown = h("p", { "data-testid": "countdown" }, this.countdownText());
    this.slot.replaceChildren(h("section", {
      class: "scheduled", "data-testid": "scheduled", "data-stage": stage, "data-entered": entered ? "yes" : "no",
    },
    h("p", {}, t("scheduled.draw_at", { at: dateTime(r.draw_at) }), " · ",
      t("scheduled.cutoff", { at: dateTime(r.cutoff) })),
    this.countdown,
    this.entering(entered, closed),
    r.entrants_hash ? h("p", { class: "muted", "data-testid": "entrants", "data-hash": r.entrants_hash },
      t("scheduled.entrants", { n: r.entrants }), " ", h("code", { class: "hash" }, r.entrants_hash)) : "",
    stage === "drawn" && entered ? this.outcome() : "",
    stage === "drawn" ? h("a", { href: `/api/activities/${this.activity.id}/scheduled-draw`, target: "_blank",
      rel: "noopener", "data-testid": "verify-draw" }, t("scheduled.verify")) : ""));
  }

  entering(entered, closed) {
    if (entered) return h("p", { class: "ok", "data-testid": "entered" }, t("scheduled.entered"));
    if (closed) return h("p", { class: "muted", "data-testid": "entries-closed" }, t("scheduled.closed"));
    return h("button", { class: "primary", "data-testid": "enter", onclick: (event) => this.enter(event.target) },
      t("scheduled.enter"));
  }

  outcome() {
    const won = this.entrance.won ?? [];
    const text = won.length ? t("scheduled.won", { title: won.map((id) => this.titles(id)).join(", ") })
      : t("scheduled.not_won");
    return h("p", { class: won.length ? "won" : "muted", "data-testid": "outcome", "data-won": won.join(" ") }, text);
  }

  // One key per click, the button off until the answer is in: a double click enters once.
  async enter(button) {
    button.disabled = true;
    try {
      this.entrance = await api(`/api/activities/${this.activity.id}/entry`, { method: "POST" });
      notify(t("scheduled.entered"), "ok");
    } catch (error) {
      button.disabled = false;
      this.onError(error);
      if (error.code !== "entry_closed") return;
    }
    await this.read(++this.reads).catch((error) => this.onError(error));
  }
}

// Seconds left as [d] h:mm:ss.
function clock(seconds) {
  const [d, hh, mm, ss] = [Math.floor(seconds / 86400), Math.floor(seconds / 3600) % 24,
    Math.floor(seconds / 60) % 60, seconds % 60];
  const time = `${hh}:${String(mm).padStart(2, "0")}:${String(ss).padStart(2, "0")}`;
  return d ? `${d}d ${time}` : time;
}
