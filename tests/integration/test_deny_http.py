"""Deny lists over HTTP on every backend (SQLite alone; PostgreSQL and MariaDB with sessions,
limits and news in Redis): a denied phone cannot register, a denied range cannot log in or
draw, an expired entry no longer denies, 40 refused draws in a minute block a player under a
rule of 30 until lifted, and a listed number set on a profile is refused by the next draw."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from raffle.adapters.campaign_file import read_campaign
from raffle.adapters.passwords import PasswordHasher
from raffle.bootstrap import Raffle
from raffle.entrypoints.http.app import create_app
from raffle.service.auth import create_user
from tests.integration.raffles import Build, SettableClock

DEMO = Path(__file__).parents[2] / "examples" / "big-market.yaml"
DRAWS = "/api/activities/100301/draws"
PASSWORD = "correct horse battery"
ABUSER_IP = "203.0.113.9"


@dataclass
class World:
    raffle: Raffle
    clock: SettableClock
    http: httpx.AsyncClient  # from 127.0.0.1
    abuser: httpx.AsyncClient  # the same application, from ABUSER_IP
    root: dict[str, str]

    async def login(self, name: str) -> dict[str, str]:
        answer = await self.http.post("/api/auth/login", json={"name": name, "password": PASSWORD})
        assert answer.status_code == 200, answer.text
        return {"Authorization": f"Bearer {answer.json()['token']}"}

    async def deny(self, **entry: Any) -> dict[str, Any]:
        answer = await self.http.post("/api/admin/deny-list", json=entry, headers=self.root)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    async def draw(self, headers: dict[str, str], client: httpx.AsyncClient | None = None) -> Any:
        key = {"Idempotency-Key": uuid.uuid4().hex}
        answer = await (client or self.http).post(DRAWS, headers={**headers, **key})
        return answer.status_code if answer.is_success else answer.json()["code"]


@pytest.fixture
async def world(build: Build, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[World]:
    monkeypatch.setenv("RAFFLE_DRAWS_PER_SECOND", "1000")  # refusals here are the quota's
    clock = SettableClock()
    raffle = await build(read_campaign(DEMO), clock)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    for name, admin in (("root", True), ("alice", False), ("mallory", False)):
        await create_user(name, PASSWORD, admin, raffle.uow(), raffle.hasher)
    app = create_app(raffle, scheduler=False)
    local = httpx.ASGITransport(app=app)
    remote = httpx.ASGITransport(app=app, client=(ABUSER_IP, 4321))
    async with (
        httpx.AsyncClient(transport=local, base_url="http://raffle.test") as http,
        httpx.AsyncClient(transport=remote, base_url="http://raffle.test") as abuser,
    ):
        login = await http.post("/api/auth/login", json={"name": "root", "password": PASSWORD})
        root = {"Authorization": f"Bearer {login.json()['token']}"}
        yield World(raffle, clock, http, abuser, root)


def _denied(answer: httpx.Response) -> None:
    assert answer.status_code == 403, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == "denied"


async def test_a_denied_phone_range_or_user_is_refused_until_lifted_or_expired(
    world: World,
) -> None:
    alice = await world.login("alice")  # signed in before her address was denied
    await world.deny(kind="phone", value="138 0013 8000", reason="fraud ring")
    await world.deny(kind="ip", value="203.0.113.0/24", reason="scripted sign-ups")

    phone = {"name": "eve", "password": PASSWORD, "phone": "+86 138-0013-8000"}
    _denied(await world.http.post("/api/auth/register", json=phone))
    async with world.raffle.uow() as uow:
        assert await uow.users.get("eve") is None  # nothing stored
    login = {"name": "alice", "password": PASSWORD}
    _denied(await world.abuser.post("/api/auth/login", json=login))
    assert await world.draw(alice, world.abuser) == "denied"
    assert await world.draw(alice) == 201  # outside the range, the same player draws

    expires = (world.clock.now() + timedelta(hours=1)).isoformat()
    await world.deny(kind="user", value="alice", reason="cool-off", expires_at=expires)
    assert await world.draw(alice) == "denied"
    world.clock.current += timedelta(seconds=3601)
    assert await world.draw(alice) == 201


async def test_forty_refused_draws_in_a_minute_block_under_a_rule_of_thirty(world: World) -> None:
    rule = {
        "event": "refused_draw",
        "subject": "user",
        "threshold": 30,
        "window_minutes": 1,
        "block_minutes": 60,
    }
    made = await world.http.post("/api/admin/block-rules", json=rule, headers=world.root)
    assert made.status_code == 200, made.text
    mallory = await world.login("mallory")

    codes = [await world.draw(mallory) for _ in range(43)]  # the welcome pack's 3, then 40

    assert codes == [201] * 3 + ["no_chances"] * 31 + ["denied"] * 9
    page = (await world.http.get("/api/admin/deny-list", headers=world.root)).json()
    (entry,) = page["entries"]
    assert (entry["kind"], entry["value"], entry["automatic"]) == ("user", "mallory", True)
    evidence = entry["evidence"]
    assert (evidence["rule_id"], evidence["count"], evidence["window_minutes"]) == (
        made.json()["id"],
        31,
        1,
    )
    lifted = await world.http.delete(f"/api/admin/deny-list/{entry['id']}", headers=world.root)
    assert lifted.status_code == 200, lifted.text
    top_up = {"user_id": "mallory", "sku": 9011, "out_business_no": f"t-{uuid.uuid4().hex}"}
    topped = await world.http.post("/api/admin/top-ups", json=top_up, headers=world.root)
    assert topped.is_success, topped.text
    assert await world.draw(mallory) == 201


async def test_a_listed_number_set_on_a_profile_is_refused_by_the_next_draw(world: World) -> None:
    alice = await world.login("alice")
    await world.deny(kind="phone", value="13900139000", reason="fraud ring")
    assert await world.draw(alice) == 201  # her profile (none) now kept by the process

    listed = {"phone": "13900139000", "sn": "SN-8"}
    put = await world.http.put("/api/admin/profiles/alice", json=listed, headers=world.root)
    assert put.status_code == 200, put.text
    assert await world.draw(alice) == "denied"

    put = await world.http.put("/api/admin/profiles/alice", json={"sn": "SN-8"}, headers=world.root)
    assert put.status_code == 200, put.text
    assert await world.draw(alice) == 201
