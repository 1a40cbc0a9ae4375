// My prizes on the player page, a page at a time ("More" reads the next, older one with the
// API's cursor), read again while one shown is not delivered yet so that a player sees it
// delivered without reloading. prizes.js draws the list.
import { api, session } from "/web/api.js";
import { prizeList } from "/web/prizes.js";

const PAGE = 20; // prizes a page of /api/me/prizes answers by default
const MAX_PAGE = 100; // the most it answers at once
// Read again every half second at first, then less often (up to every 8 s), for 10 minutes
// at most; a draw or "More" starts it again.
const POLL_FIRST = 500;
const POLL_MOST = 8000;
const POLL_FOR = 600_000;
const NONE = { draws: [], next: null };

// Not delivered yet: "on its way", or "delayed" until an operator sends it again.
const pending = (draw) => draw.state !== "completed";

// The `limit` that reads my prizes again from the newest down past the oldest pending one
// shown (and one more, for a prize won meanwhile). Pending ones further down than the
// largest page are left as they were.
function refreshLimit(shown) {
  const oldest = shown.draws.findLastIndex(pending);
  return Math.min(MAX_PAGE, Math.max(PAGE, oldest + 2));
}

// `shown` ({draws, next}) with a page of /api/me/prizes read `before` an order id (null: from
// the newest) in place of what it covers. Order ids sort by time, so the page covers the ids
// below `before` down to its own `next` (its last one), or to the end without one; what is
// shown outside that range is kept, whichever answer arrives first.
export function mergePrizes(shown, page, before = null) {
  const newer = before === null ? [] : shown.draws.filter((d) => d.order_id >= before);
  const older = page.next === null ? [] : shown.draws.filter((d) => d.order_id < page.next);
  return { draws: [...newer, ...page.draws, ...older], next: older.length ? shown.next : page.next };
}

export class MyPrizes {
  // `onSave(draw, form)`: a shipping address to save; `onError(error)`: a read that failed;
  // `onClaim(draw)`: a coupon prize to claim.
  constructor(onSave, onError, onClaim) {
    Object.assign(this, { onSave, onError, onClaim, slot: null, names: new Map(), shown: NONE });
    this.reads = 0; // only the latest read from the newest is shown: a late answer is stale
    this.timer = 0;
    this.delay = 0;
    this.since = 0;
  }

  // Show them in `slot`, activities named by `names` (id -> name); read them now.
  async start(slot, names) {
    Object.assign(this, { slot, names });
    this.restartPolls();
    await this.load();
  }

  // Logged out: nothing in flight is shown, the next player starts from the newest.
  stop() {
    this.reads++;
    clearTimeout(this.timer);
    this.shown = NONE;
  }

  // From the newest down past the oldest pending one shown.
  async load() {
    const read = ++this.reads;
    clearTimeout(this.timer);
    const page = await api(`/api/me/prizes?limit=${refreshLimit(this.shown)}`).catch((error) => {
      if (read === this.reads) throw error;
    });
    if (read === this.reads) this.show(mergePrizes(this.shown, page));
  }

  // The next, older page, added below what is shown.
  async more(button) {
    button.disabled = true;
    const { token } = session;
    const before = this.shown.next;
    try {
      const page = await api(`/api/me/prizes?limit=${PAGE}&before=${encodeURIComponent(before)}`);
      if (session.token !== token) return; // logged out meanwhile
      this.restartPolls();
      this.show(mergePrizes(this.shown, page, before));
    } catch (error) {
      button.disabled = false;
      this.onError(error);
    }
  }

  show(shown) {
    this.shown = shown;
    const more = (event) => this.more(event.target);
    this.slot.replaceChildren(prizeList(shown, this.names, this.onSave, this.slot, more, this.onClaim));
    clearTimeout(this.timer);
    if (!shown.draws.some(pending) || Date.now() - this.since > POLL_FOR) return;
    this.delay = Math.min(this.delay ? this.delay * 2 : POLL_FIRST, POLL_MOST);
    this.timer = setTimeout(() => this.load().catch(this.onError), this.delay);
  }

  restartPolls() {
    this.delay = 0;
    this.since = Date.now();
  }
}
