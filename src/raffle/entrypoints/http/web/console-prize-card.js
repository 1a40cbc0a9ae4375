// A prize's card in the campaign editor (docs/prize-pool.md): level, image (uploaded here or
// an https URL), description, win tips, priority, nine-grid cell, value and the switch. The
// fields are the campaign document's, stored with the rest by Save.
//
// Test hooks: [data-testid=prize-upload] is the file input of each prize, [data-testid=
// prize-thumb] its image once it has one.

import { api, h, notify } from "/web/api.js";
import { field, integer, report } from "/web/console-fields.js";

const IMAGE_ID = /(?:^|\/)([0-9a-f]{64})(?:\.[a-z]+)?$/;

// Where the console reads a prize's image: ours for an uploaded one (its id, or the path an
// export writes, images/<id>.<ext>), else the https URL as it is.
export function imageUrl(image) {
  if (!image) return null;
  const uploaded = IMAGE_ID.exec(image);
  if (uploaded) return `/api/prize-images/${uploaded[1]}`;
  return image.startsWith("https://") ? image : null;
}

const text = (v) => (v.trim() === "" ? undefined : v);

export function prizeCard(p, at) {
  const thumb = h("span", { class: "thumb" });
  const imageField = field("Image (uploaded or https URL)", `${at}.image`, p.image, (v) => { set("image", text(v)); show(); }, { wide: true });
  const set = (key, value) => (value === undefined ? delete p[key] : (p[key] = value));
  const show = () => {
    const url = imageUrl(p.image);
    thumb.replaceChildren(url ? h("img", { src: url, alt: "", "data-testid": "prize-thumb" }) : "");
  };
  const upload = h("input", {
    type: "file", accept: "image/png,image/jpeg,image/webp,image/gif", "data-testid": "prize-upload",
    "aria-label": "Upload an image",
    onchange: async (event) => {
      const file = event.target.files[0];
      if (!file) return;
      const form = new FormData();
      form.append("file", file);
      try {
        const image = await api("/api/admin/prize-images", { method: "POST", form });
        p.image = image.id;
        imageField.querySelector("input").value = image.id;
        show();
        notify(`Image uploaded (${image.width}×${image.height}): save to show it.`, "ok");
      } catch (error) {
        report(error);
      }
      event.target.value = "";
    },
  });
  show();
  const enabled = h("input", {
    type: "checkbox", checked: p.enabled !== false, dataset: { at: `${at}.enabled` },
    onchange: (event) => set("enabled", event.target.checked ? undefined : false),
  });
  return h("div", { class: "row prize-card", dataset: { at: `${at}.card` } },
    h("label", {}, enabled, "Enabled"),
    field("Level", `${at}.level`, p.level, (v) => set("level", integer(v)), { type: "number", hint: "1" }),
    field("Level name", `${at}.level_name`, p.level_name, (v) => set("level_name", text(v)), { hint: "一等奖" }),
    thumb, imageField, h("label", {}, "Upload", upload),
    field("Description", `${at}.description`, p.description, (v) => set("description", text(v)), { wide: true }),
    field("Win tips", `${at}.win_tips`, p.win_tips, (v) => set("win_tips", text(v)), { wide: true }),
    field("Priority", `${at}.priority`, p.priority, (v) => set("priority", integer(v)), { type: "number", hint: "0" }),
    field("Nine-grid cell", `${at}.cell`, p.cell, (v) => set("cell", integer(v)), { type: "number", hint: "1-8" }),
    field("Value (cents)", `${at}.value_cents`, p.value_cents, (v) => set("value_cents", integer(v)), { type: "number" }));
}
