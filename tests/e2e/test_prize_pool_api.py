"""The prize pool over HTTP: an operator uploads an image and sets a prize's card, the board
and my prizes show it; a bad upload or URL is a problem with a stable code and changes
nothing; a running activity's prize cannot be switched off."""

from __future__ import annotations

import io
import uuid

import httpx
from PIL import Image

from tests.e2e.conftest import ACTIVITY, Api
from tests.e2e.test_prizes_api import won

STRATEGY, IPHONE = 100006, 109  # the demo campaign's
PRIZE = f"/api/admin/strategies/{STRATEGY}/prizes/{IPHONE}"


def _key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


def _jpeg_with_gps() -> bytes:
    picture = Image.new("RGB", (64, 48), (250, 200, 0))
    exif = Image.Exif()
    exif[0x010F] = "SpyCam"  # Make
    exif[0x8825] = {2: (31.0, 14.0, 0.0)}  # GPS: where the operator's phone was
    out = io.BytesIO()
    picture.save(out, "JPEG", exif=exif.tobytes())
    return out.getvalue()


async def _board(api: Api) -> dict[int, dict[str, object]]:
    odds = (await api.client.get(f"/api/activities/{ACTIVITY}")).json()
    return {p["award_id"]: p for p in odds["prizes"]}


async def _upload(
    api: Api, auth: dict[str, str], data: bytes, name: str = "p.jpg"
) -> httpx.Response:
    files = {"file": (name, data, "application/octet-stream")}
    return await api.client.post("/api/admin/prize-images", files=files, headers={**auth, **_key()})


async def test_an_uploaded_image_is_stripped_and_shown_on_the_board(api: Api) -> None:
    admin = await api.login("root", admin=True)
    sent = _jpeg_with_gps()
    assert Image.open(io.BytesIO(sent)).getexif().get(0x010F) == "SpyCam"

    uploaded = await _upload(api, admin, sent, name="photo.png")  # the name is not the type
    assert uploaded.status_code == 200, uploaded.text
    image = uploaded.json()
    assert (image["media_type"], image["width"], image["height"]) == ("image/jpeg", 64, 48)

    served = await api.client.get(image["url"])
    assert served.status_code == 200
    assert served.headers["content-type"] == "image/jpeg"
    assert "immutable" in served.headers["cache-control"]
    assert b"SpyCam" not in served.content
    assert not Image.open(io.BytesIO(served.content)).getexif()
    again = await api.client.get(image["url"], headers={"If-None-Match": served.headers["etag"]})
    assert again.status_code == 304

    fields = {"image": image["id"], "level": 1, "level_name": "一等奖", "cell": 2,
              "value_cents": 899900, "win_tips": "三日内填写地址"}  # fmt: skip
    answer = await api.client.patch(PRIZE, json=fields, headers={**admin, **_key()})
    assert answer.status_code == 200, answer.text
    card = (await _board(api))[IPHONE]["card"]
    assert isinstance(card, dict)
    assert (card["level"], card["level_name"], card["image_url"]) == (1, "一等奖", image["url"])
    assert (card["cell"], card["value_cents"]) == (2, 899900)

    alice = await api.login("alice")
    order = await won(api, "alice", IPHONE)
    mine = (await api.client.get("/api/me/prizes", headers=alice)).json()["draws"]
    assert [(d["order_id"], d["card"]["level_name"]) for d in mine] == [(order, "一等奖")]


async def test_bad_uploads_and_urls_are_refused_with_a_code_and_change_nothing(api: Api) -> None:
    admin = await api.login("root", admin=True)
    before = await _board(api)

    text = await _upload(api, admin, b"<svg xmlns='http://www.w3.org/2000/svg'/>", "x.png")
    assert (text.status_code, text.json()["code"]) == (422, "invalid_image")
    assert text.headers["content-type"] == "application/problem+json"
    huge = await _upload(api, admin, b"\x89PNG\r\n\x1a\n" + bytes(3 * 1024 * 1024))
    assert (huge.status_code, huge.json()["code"]) == (413, "image_too_large")
    cut = await _upload(api, admin, _jpeg_with_gps()[:200])
    assert (cut.status_code, cut.json()["code"]) == (422, "invalid_image")

    for url in ("http://cdn.example.com/a.png", "javascript:alert(1)", "https://"):
        bad = await api.client.patch(PRIZE, json={"image": url}, headers={**admin, **_key()})
        assert (bad.status_code, bad.json()["code"]) == (422, "invalid_image_url"), url
        assert bad.json()["errors"][0]["at"] == "body.image"
    unknown = await api.client.patch(PRIZE, json={"image": "a" * 64}, headers={**admin, **_key()})
    assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_image")
    off = await api.client.patch(PRIZE, json={"enabled": False}, headers={**admin, **_key()})
    assert (off.status_code, off.json()["code"]) == (409, "odds_frozen")
    taken = {"cell": 3}
    await api.client.patch(PRIZE, json=taken, headers={**admin, **_key()})
    clash = await api.client.patch(
        f"/api/admin/strategies/{STRATEGY}/prizes/108", json=taken, headers={**admin, **_key()}
    )
    assert (clash.status_code, clash.json()["code"]) == (422, "invalid_config")
    await api.client.patch(PRIZE, json={"cell": None}, headers={**admin, **_key()})

    assert await _board(api) == before
    player = await api.login("alice")
    refused = await api.client.patch(PRIZE, json={"level": 1}, headers={**player, **_key()})
    assert refused.status_code == 403


async def test_a_campaign_exported_packed_loads_back_with_its_images(api: Api) -> None:
    admin = await api.login("root", admin=True)
    image = (await _upload(api, admin, _jpeg_with_gps())).json()
    await api.client.patch(PRIZE, json={"image": image["id"]}, headers={**admin, **_key()})

    packed = await api.client.get("/api/admin/campaigns?format=zip", headers=admin)
    assert packed.headers["content-type"] == "application/zip"
    yaml_text = (await api.client.get("/api/admin/campaigns", headers=admin)).text
    assert f"image: images/{image['id']}.jpg" in yaml_text.replace("'", "")

    loaded = await api.client.post(
        "/api/admin/campaigns/packed",
        content=packed.content,
        headers={**admin, **_key(), "content-type": "application/zip"},
    )
    assert loaded.status_code == 200, loaded.text
    broken = await api.client.post(
        "/api/admin/campaigns/packed",
        content=b"PK not a zip",
        headers={**admin, **_key(), "content-type": "application/zip"},
    )
    assert (broken.status_code, broken.json()["code"]) == (422, "invalid_campaign_file")
    assert (await _board(api))[IPHONE]["card"]["image"] == image["id"]  # type: ignore[index]
