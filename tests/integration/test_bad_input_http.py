"""Bad input over HTTP on every backend: numbers past the databases' keys are refused before
they reach one, and an operator's top-up names a user who exists (or says to open one)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from raffle.adapters.campaign_file import read_campaign
from raffle.adapters.passwords import PasswordHasher
from raffle.domain.limits import MAX_ID
from raffle.entrypoints.http.app import create_app
from raffle.service.auth import create_user
from tests.integration.raffles import Build

DEMO = Path(__file__).parents[2] / "examples" / "big-market.yaml"
ACTIVITY, SKU = 100301, 9011
PASSWORD = "correct horse battery"


@dataclass
class Client:
    http: httpx.AsyncClient
    admin: dict[str, str]
    player: dict[str, str]


@pytest.fixture
async def client(build: Build) -> AsyncIterator[Client]:
    raffle = await build(read_campaign(DEMO), None)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    app = create_app(raffle, scheduler=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://raffle.test") as http:
        headers = []
        for name, admin in (("root", True), ("alice", False)):
            await create_user(name, PASSWORD, admin, raffle.uow(), raffle.hasher)
            login = await http.post("/api/auth/login", json={"name": name, "password": PASSWORD})
            headers.append({"Authorization": f"Bearer {login.json()['token']}"})
        yield Client(http, *headers)


async def test_ids_past_64_bits_are_refused_before_storage(client: Client) -> None:
    c, too_big = client.http, MAX_ID + 1
    refused = [
        await c.get(f"/api/activities/{too_big}"),
        await c.post(f"/api/activities/{too_big}/draws", headers=client.player),
        await c.get(f"/api/activities/{2**70}/account", headers=client.player),
        await c.post(
            "/api/admin/top-ups",
            headers=client.admin,
            json={"user_id": "alice", "sku": too_big, "out_business_no": "o-1"},
        ),
        await c.post("/api/me/points/exchanges", headers=client.player, json={"sku": -(2**64)}),
        await c.get(f"/api/admin/deliveries/failed?activity_id={too_big}", headers=client.admin),
        await c.get(
            "/api/admin/deliveries/counts?unpublished_after_seconds=1e300", headers=client.admin
        ),
    ]
    assert [(r.status_code, r.json()["code"]) for r in refused] == [(422, "invalid_input")] * 7
    assert all(r.headers["content-type"] == "application/problem+json" for r in refused)
    # the largest id the keys hold goes through to the database, which has no such activity
    largest = [
        await c.get(f"/api/activities/{MAX_ID}"),
        await c.post(f"/api/activities/{MAX_ID}/draws", headers=client.player),
    ]
    assert [(r.status_code, r.json()["code"]) for r in largest] == [(404, "unknown_activity")] * 2


async def test_a_top_up_for_an_unknown_user_is_refused_unless_it_opens_the_account(
    client: Client,
) -> None:
    c = client.http
    body = {"user_id": "nobody-here", "sku": SKU, "out_business_no": "pay-1"}
    refused = await c.post("/api/admin/top-ups", headers=client.admin, json=body)
    assert (refused.status_code, refused.json()["code"]) == (404, "unknown_user")
    assert refused.headers["content-type"] == "application/problem+json"
    opened = await c.post(
        "/api/admin/top-ups", headers=client.admin, json={**body, "open_account": True}
    )
    assert opened.status_code == 200, opened.text
    assert opened.json()["credited"] is True
    known = await c.post(
        "/api/admin/top-ups",
        headers=client.admin,
        json={"user_id": "alice", "sku": SKU, "out_business_no": "pay-2"},
    )
    assert (known.status_code, known.json()["credited"]) == (200, True)
    skus = (await c.get(f"/api/activities/{ACTIVITY}/skus")).json()
    left = next(s for s in skus if s["sku"] == SKU)
    assert left["stock"] - left["stock_left"] == 2  # the refused top-up took no unit
