// Paid content on the player page: the shelf (content on sale with its cover, summary and
// price), the content I hold (won as a prize, bought later), and one piece opened — its body
// when I hold it, else its free preview and its price.
//
// The Buy button is the payment orders' hook: shown only when the API gives the content a
// `buy` link (a payment gateway is configured) and the page a buyer
// (`new ContentShelf(onError, onBuy)`, web/payments.js's checkout).
//
// Stable hooks for tests: [data-testid=content-card] items (data-content = the id) with an
// "Open" button; [data-testid=my-content] items likewise; [data-testid=content-view]
// (data-content, data-held true | false) with [data-testid=content-body] when held, else
// [data-testid=content-preview] and [data-testid=content-price]; [data-testid=buy].
import { api, h } from "/web/api.js";
import { language, t } from "/web/i18n.js";

export const price = (cents) =>
  new Intl.NumberFormat(language, { style: "currency", currency: "CNY" }).format(cents / 100);

// HTML the server made from Markdown and sanitised (adapters/markdown.py: raw HTML off, then
// an allow-list of tags, attributes and URL schemes), so it is inserted as it comes.
function rendered(html, testid) {
  const node = h("div", { class: "markdown", "data-testid": testid });
  node.innerHTML = html;
  return node;
}

function cover(url, alt) {
  return url ? h("img", { class: "cover", src: url, alt, loading: "lazy" }) : null;
}

export class ContentShelf {
  constructor(onError, onBuy = null) {
    Object.assign(this, { onError, onBuy, slot: null, reads: 0 });
  }

  async start(slot) {
    this.slot = slot;
    await this.list();
  }

  // Logged out: an answer still in flight is not shown.
  stop() {
    this.reads++;
  }

  async list() {
    const read = ++this.reads;
    const [cards, mine] = await Promise.all([api("/api/content"), api("/api/me/content")]);
    if (read !== this.reads) return;
    const held = new Set(mine.map((m) => m.content_id));
    const shelf = cards.map((c) => h("li", { class: "content-card", "data-testid": "content-card", "data-content": c.id },
      cover(c.cover, c.title),
      h("div", { class: "content-about" }, h("strong", {}, c.title), h("p", { class: "muted" }, c.summary),
        h("span", { class: "badge" }, held.has(c.id) ? t("content.held") : price(c.price_cents))),
      this.openButton(c.id)));
    const owned = mine.map((m) => h("li", { "data-testid": "my-content", "data-content": m.content_id },
      h("span", {}, m.title ?? m.content_id), m.title ? this.openButton(m.content_id) : null));
    this.slot.replaceChildren(
      shelf.length ? h("ul", { class: "content-shelf" }, ...shelf) : h("p", { class: "muted" }, t("content.none")),
      h("h3", {}, t("content.mine")),
      owned.length ? h("ul", { class: "my-content" }, ...owned) : h("p", { class: "muted" }, t("content.none_mine")));
  }

  openButton(id) {
    return h("button", { onclick: () => this.open(id).catch(this.onError) }, t("content.open"));
  }

  async open(id) {
    const read = ++this.reads;
    const path = `/api/content/${encodeURIComponent(id)}`;
    const page = await api(path);
    const body = page.held ? await api(`${path}/body`) : null;
    if (read !== this.reads) return;
    const back = h("button", { class: "ghost", onclick: () => this.list().catch(this.onError) }, t("content.back"));
    const buyable = page.buy && this.onBuy;
    const rest = body ? [rendered(body.body_html, "content-body")] : [
      rendered(page.preview_html, "content-preview"),
      h("p", { class: "locked" }, t("content.locked"), " ",
        h("strong", { "data-testid": "content-price" }, price(page.price_cents))),
      buyable ? h("button", { class: "primary", "data-testid": "buy", onclick: () => this.onBuy(page) },
        t("content.buy")) : null,
    ];
    this.slot.replaceChildren(h("article", { class: "content-view", "data-testid": "content-view",
      "data-content": page.id, "data-held": String(page.held) },
    back, h("h3", {}, page.title), cover(page.cover, page.title), h("p", { class: "muted" }, page.summary), ...rest));
  }
}
