"""Deny lists and automatic blocking over HTTP (embedded): a denied phone cannot register, a
denied range cannot log in or draw, an expired entry no longer denies, and 40 refused draws
in a minute block a player under a rule of 30 until an operator lifts the entry."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from raffle.adapters.campaign_file import read_campaign
from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import Raffle, bootstrap
from raffle.domain.profiles import Profile
from raffle.entrypoints.http.app import create_app
from raffle.service.campaigns import load_campaign
from raffle.settings import Settings
from tests.e2e.conftest import ACTIVITY, DEMO, PASSWORD, Api

ABUSER_IP = "203.0.113.9"
DRAWS = f"/api/activities/{ACTIVITY}/draws"


class ShiftedClock:
    """The system's time, moved on by `advance`: the demo activity stays open."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)


@dataclass
class World:
    api: Api
    clock: ShiftedClock
    abuser: httpx.AsyncClient  # the same application, seen from ABUSER_IP

    async def root(self) -> dict[str, str]:
        return await self.api.login("root", admin=True)

    async def deny(self, headers: dict[str, str], **entry: Any) -> dict[str, Any]:
        answer = await self.api.client.post("/api/admin/deny-list", json=entry, headers=headers)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'raffle.db'}", draws_per_second=1000)
    await upgrade(settings.database_url)
    clock = ShiftedClock()
    raffle: Raffle = bootstrap(settings, clock=clock)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await load_campaign(read_campaign(DEMO), raffle.uow())
    await raffle.start()
    app = create_app(raffle, scheduler=False)
    local = httpx.ASGITransport(app=app)
    remote = httpx.ASGITransport(app=app, client=(ABUSER_IP, 4321))
    async with (
        httpx.AsyncClient(transport=local, base_url="http://raffle.test") as client,
        httpx.AsyncClient(transport=remote, base_url="http://raffle.test") as abuser,
    ):
        yield World(Api(raffle, client), clock, abuser)
    await raffle.close()


def _denied(answer: httpx.Response) -> None:
    assert answer.status_code == 403, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    body = answer.json()
    assert body["code"] == "denied"
    # Nothing that helps an abuser: not the list, not the reason, not the value.
    assert "phone" not in body["detail"]
    assert "range" not in body["detail"]


def _draw_key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


async def test_a_denied_phone_cannot_register(world: World) -> None:
    root = await world.root()
    await world.deny(root, kind="phone", value="138 0013 8000", reason="fraud ring")

    refused = await world.api.client.post(
        "/api/auth/register",
        json={"name": "mallory", "password": PASSWORD, "phone": "+86 138-0013-8000"},
    )

    _denied(refused)
    async with world.api.raffle.uow() as uow:
        assert await uow.users.get("mallory") is None  # nothing stored
    fine = await world.api.client.post(
        "/api/auth/register",
        json={"name": "alice", "password": PASSWORD, "phone": "13900139000"},
    )
    assert fine.status_code == 201, fine.text
    assert (await world.api.raffle.profiles.of("alice")).phone == "+8613900139000"


async def test_a_denied_range_cannot_log_in_or_draw(world: World) -> None:
    root = await world.root()
    alice = await world.api.login("alice")  # signed in before the range was denied
    await world.deny(root, kind="ip", value="203.0.113.0/24", reason="scripted sign-ups")

    login = await world.abuser.post("/api/auth/login", json={"name": "alice", "password": PASSWORD})
    _denied(login)
    _denied(await world.abuser.post(DRAWS, headers={**alice, **_draw_key()}))
    registered = await world.abuser.post(
        "/api/auth/register", json={"name": "bob", "password": PASSWORD}
    )
    _denied(registered)
    # Outside the range the same player draws.
    drawn = await world.api.client.post(DRAWS, headers={**alice, **_draw_key()})
    assert drawn.status_code == 201, drawn.text


async def test_a_denied_user_phone_or_device_is_refused_everywhere_it_applies(
    world: World,
) -> None:
    root = await world.root()
    alice = await world.api.login("alice")
    profile = {"phone": "13800138000", "sn": "SN-42"}
    put = await world.api.client.put("/api/admin/profiles/alice", json=profile, headers=root)
    assert put.status_code == 200, put.text
    entry = await world.deny(root, kind="sn", value="SN-42", reason="emulator farm")

    _denied(await world.api.client.post(DRAWS, headers={**alice, **_draw_key()}))
    sign_in = f"/api/activities/{ACTIVITY}/sign-in"
    _denied(await world.api.client.post(sign_in, headers=alice))
    exchange = {"sku": 9011}
    _denied(await world.api.client.post("/api/me/points/exchanges", json=exchange, headers=alice))
    top_up = {"user_id": "alice", "sku": 9011, "out_business_no": "t-1"}
    _denied(await world.api.client.post("/api/admin/top-ups", json=top_up, headers=root))
    login = {"name": "alice", "password": PASSWORD}
    _denied(await world.api.client.post("/api/auth/login", json=login))

    lifted = await world.api.client.delete(f"/api/admin/deny-list/{entry['id']}", headers=root)
    assert lifted.status_code == 200, lifted.text
    assert (await world.api.client.post(DRAWS, headers={**alice, **_draw_key()})).status_code == 201


async def test_a_profile_changed_in_this_process_is_screened_at_once(world: World) -> None:
    """The draw screens the player's phone and device from the process's copy of their
    profile (no database read): a change made through this process is seen by the next
    draw, while one written behind its back waits for news (none here: no watcher runs)."""
    root = await world.root()
    alice = await world.api.login("alice")
    await world.deny(root, kind="phone", value="13900139000", reason="fraud ring")
    await world.deny(root, kind="sn", value="SN-7", reason="emulator farm")
    assert (await world.api.client.post(DRAWS, headers={**alice, **_draw_key()})).status_code == 201
    async with world.api.raffle.uow() as uow:  # another process, unheard
        await uow.profiles.put(Profile("alice", sn="SN-7"), world.clock.now())
        await uow.commit()
    kept = await world.api.client.post(DRAWS, headers={**alice, **_draw_key()})
    assert kept.status_code == 201, kept.text  # the copy was kept: no read on the draw

    listed = {"phone": "13900139000", "sn": "SN-8"}
    put = await world.api.client.put("/api/admin/profiles/alice", json=listed, headers=root)
    assert put.status_code == 200, put.text
    _denied(await world.api.client.post(DRAWS, headers={**alice, **_draw_key()}))

    put = await world.api.client.put("/api/admin/profiles/alice", json={"sn": "SN-8"}, headers=root)
    assert put.status_code == 200, put.text
    assert (await world.api.client.post(DRAWS, headers={**alice, **_draw_key()})).status_code == 201


async def test_an_expired_entry_no_longer_denies(world: World) -> None:
    root = await world.root()
    alice = await world.api.login("alice")
    expires = (world.clock.now() + timedelta(hours=1)).isoformat()
    await world.deny(root, kind="user", value="alice", reason="cool-off", expires_at=expires)
    _denied(await world.api.client.post(DRAWS, headers={**alice, **_draw_key()}))

    world.clock.advance(3601)

    drawn = await world.api.client.post(DRAWS, headers={**alice, **_draw_key()})
    assert drawn.status_code == 201, drawn.text
    listed = await world.api.client.get("/api/admin/deny-list?in_force=true", headers=root)
    assert listed.json()["entries"] == []


async def test_forty_refused_draws_in_a_minute_block_under_a_rule_of_thirty(world: World) -> None:
    root = await world.root()
    rule = {
        "event": "refused_draw",
        "subject": "user",
        "threshold": 30,
        "window_minutes": 1,
        "block_minutes": 60,
    }
    made = await world.api.client.post("/api/admin/block-rules", json=rule, headers=root)
    assert made.status_code == 200, made.text
    mallory = await world.api.login("mallory")
    codes = []
    for _ in range(43):  # the welcome pack's 3 a day, then 40 refusals
        answer = await world.api.client.post(DRAWS, headers={**mallory, **_draw_key()})
        codes.append(answer.json().get("code", answer.status_code))

    assert codes[:3] == [201, 201, 201]
    assert codes[3:34] == ["no_chances"] * 31  # the 31st refusal is past the threshold
    assert codes[34:] == ["denied"] * 9
    page = (await world.api.client.get("/api/admin/deny-list", headers=root)).json()
    (entry,) = page["entries"]
    assert (entry["kind"], entry["value"], entry["automatic"]) == ("user", "mallory", True)
    evidence = entry["evidence"]
    assert evidence["rule_id"] == made.json()["id"]
    assert (evidence["event"], evidence["count"], evidence["window_minutes"]) == (
        "refused_draw",
        31,
        1,
    )
    assert evidence["first_at"] <= evidence["last_at"]
    assert entry["added_by"] == f"rule {evidence['rule_id']}"

    lifted = await world.api.client.delete(f"/api/admin/deny-list/{entry['id']}", headers=root)
    assert lifted.status_code == 200, lifted.text
    top_up = {"user_id": "mallory", "sku": 9012, "out_business_no": "after-lift"}
    assert (await world.api.client.post("/api/admin/top-ups", json=top_up, headers=root)).is_success
    drawn = await world.api.client.post(DRAWS, headers={**mallory, **_draw_key()})
    assert drawn.status_code == 201, drawn.text


async def test_failed_logins_block_the_address(world: World) -> None:
    root = await world.root()
    rule = {
        "event": "failed_login",
        "subject": "ip",
        "threshold": 3,
        "window_minutes": 10,
        "block_minutes": 5,
    }
    assert (
        await world.api.client.post("/api/admin/block-rules", json=rule, headers=root)
    ).is_success
    wrong = {"name": "alice", "password": "not the password"}
    answers = [
        (await world.abuser.post("/api/auth/login", json=wrong)).status_code for _ in range(5)
    ]
    assert answers == [401, 401, 401, 401, 403]
    (entry,) = (await world.api.client.get("/api/admin/deny-list", headers=root)).json()["entries"]
    assert (entry["kind"], entry["value"]) == ("ip", f"{ABUSER_IP}/32")
    assert entry["evidence"]["count"] == 4
    await world.api.login("alice")  # from another address, unaffected


async def test_operators_list_import_and_are_told_of_bad_entries(world: World) -> None:
    root = await world.root()
    entries = [{"kind": "user", "value": f"bot{i}", "reason": "bulk"} for i in range(50)] + [
        {"kind": "ip", "value": "2001:db8::/32", "reason": "bulk"}
    ]
    imported = await world.api.client.post(
        "/api/admin/deny-list/import", json={"entries": entries}, headers=root
    )
    assert imported.json() == {"added": 51}
    first = await world.api.client.get("/api/admin/deny-list?kind=user&limit=20", headers=root)
    page = first.json()
    assert len(page["entries"]) == 20
    assert page["next"] is not None
    assert all(e["added_by"] == "root" for e in page["entries"])
    after = await world.api.client.get(
        f"/api/admin/deny-list?kind=user&limit=40&after={page['next']}", headers=root
    )
    assert len(after.json()["entries"]) == 30
    prefixed = await world.api.client.get("/api/admin/deny-list?value=bot4", headers=root)
    assert {e["value"] for e in prefixed.json()["entries"]} == {
        "bot4",
        *(f"bot4{i}" for i in range(10)),
    }

    bad = [
        {"kind": "ip", "value": "10.0.0.0/40", "reason": "x"},
        {"kind": "user", "value": "z", "reason": "y"},
    ]
    refused = await world.api.client.post(
        "/api/admin/deny-list/import", json={"entries": bad}, headers=root
    )
    assert (refused.status_code, refused.json()["code"]) == (422, "invalid_deny_entry")
    assert "entry 0" in refused.json()["detail"]
    bad_phone = {"kind": "phone", "value": "12", "reason": "x"}
    answer = await world.api.client.post("/api/admin/deny-list", json=bad_phone, headers=root)
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_deny_entry")
    total = await world.api.client.get("/api/admin/deny-list?limit=100", headers=root)
    assert len(total.json()["entries"]) == 51  # nothing of the refused import stored
    missing = await world.api.client.delete("/api/admin/deny-list/999999", headers=root)
    assert (missing.status_code, missing.json()["code"]) == (404, "unknown_deny_entry")
    alice = await world.api.login("alice")
    by_player = await world.api.client.get("/api/admin/deny-list", headers=alice)
    assert by_player.status_code == 403
