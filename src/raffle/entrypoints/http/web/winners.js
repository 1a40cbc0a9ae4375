// The winners' feed on the player page (GET /api/activities/{id}/winners): the activity's
// recent wins with masked names, as one line that moves from win to win (`ticker`) or as
// tiles (`tiled`), read again every few seconds (the server keeps that first page a moment,
// so every open page costs one read per activity and process, not one each); nothing when
// the activity hides it.
//
// Stable hooks for tests: [data-testid=winners] (data-display = ticker | tiled), its
// [data-testid=winner] items (data-winner = the masked name, data-award = the prize's id).
import { api, h } from "/web/api.js";
import { dateTime, t } from "/web/i18n.js";

const EVERY_MS = 5000; // how often the feed is read again
const TICKER_MS = 3000; // how long the ticker shows each win
const SHOWN = 10;

export class WinnersFeed {
  constructor(onError) {
    Object.assign(this, { onError, reads: 0, timer: null, turn: null, slot: h("section", { hidden: true }) });
  }

  // Start (or restart) on an activity; a hidden feed is never asked for.
  // What is shown stays until the new read replaces it.
  start(activity) {
    this.pause();
    if (!activity || activity.show_winning_list === "hidden") return this.stop();
    this.activity = activity;
    this.read().catch((error) => this.failed(error));
  }

  // An operator hid the feed since the page read the activity: it goes, quietly.
  failed(error) {
    if (error.code === "feed_hidden") return this.stop();
    this.onError(error);
  }

  stop() {
    this.pause();
    this.slot.hidden = true;
  }

  pause() {
    this.reads++;
    clearTimeout(this.timer);
    clearInterval(this.turn);
  }

  async read() {
    const read = ++this.reads;
    const page = await api(`/api/activities/${this.activity.id}/winners?limit=${SHOWN}`);
    if (read !== this.reads) return;
    this.render(page);
    this.timer = setTimeout(() => this.read().catch((error) => this.failed(error)), EVERY_MS);
  }

  render(page) {
    const items = page.wins.map((w) => h("li", { class: "winner", "data-testid": "winner",
      "data-winner": w.winner, "data-award": w.award_id },
    t("winners.won", { winner: w.winner, title: w.title }), " ",
    h("time", { class: "muted", datetime: w.won_at }, dateTime(w.won_at))));
    const list = items.length ? h("ul", { class: `winners ${page.display}` }, ...items)
      : h("p", { class: "muted" }, t("winners.none"));
    this.slot.replaceChildren(h("h2", {}, t("winners.title")), list);
    Object.assign(this.slot, { className: "card wide winners-card", hidden: false });
    Object.assign(this.slot.dataset, { testid: "winners", display: page.display });
    clearInterval(this.turn);
    if (page.display === "ticker" && items.length > 1) {
      let shown = 0; // one line: each win in turn
      items.forEach((item, i) => { item.hidden = i !== 0; });
      this.turn = setInterval(() => {
        items[shown].hidden = true;
        shown = (shown + 1) % items.length;
        items[shown].hidden = false;
      }, TICKER_MS);
    }
  }
}
