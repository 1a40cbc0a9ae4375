"""Stock warnings over HTTP on the embedded default: operators read which prizes are at or
below their threshold, and with no webhook configured the relay logs the notice."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from raffle.adapters.campaign_file import parse_campaign
from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import bootstrap
from raffle.entrypoints.http.app import create_app
from raffle.service.campaigns import load_campaign
from raffle.service.relay import relay
from raffle.settings import Settings
from tests.e2e.conftest import Api

ACTIVITY = 100501
CAMPAIGN = f"""awards:
  - {{id: 101, kind: thanks, title: Thanks for playing}}
  - {{id: 102, kind: physical, title: Desk lamp}}
strategies:
  - id: 1005
    fallback: 101
    prizes:
      - {{award: 102, rate: 1, stock: 5, warning_surplus: 2}}
packs:
  - {{id: 11, total: 10, day: 10, month: 10}}
activities:
  - {{id: {ACTIVITY}, name: Lamps, strategy: 1005, state: running, welcome_pack: 11,
     begin_at: 2026-01-01T00:00:00+08:00, end_at: 2030-01-01T00:00:00+08:00}}
"""


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'raffle.db'}",
        draws_per_second=1000,
        publish_timeout_seconds=0.2,  # the wins' messages: no consumer runs here
    )
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await load_campaign(parse_campaign(CAMPAIGN, "lamps"), raffle.uow())
    await raffle.start()
    transport = httpx.ASGITransport(app=create_app(raffle, scheduler=False))
    async with httpx.AsyncClient(transport=transport, base_url="http://raffle.test") as client:
        yield Api(raffle, client)
    await raffle.close()


async def test_operators_read_the_warnings_and_the_notice_is_logged(
    api: Api, server_log: io.StringIO
) -> None:
    admin = await api.login("root", admin=True)
    path = f"/api/admin/activities/{ACTIVITY}/stock-warnings"

    async def warnings() -> list[dict[str, object]]:
        answer = await api.client.get(path, headers=admin)
        assert answer.status_code == 200, answer.text
        return list(answer.json())

    assert await warnings() == [
        {"award_id": 102, "title": "Desk lamp", "stock": 5, "left": 5, "warning_surplus": 2,
         "warned": False}
    ]  # fmt: skip
    player = await api.login("ann")
    for n in range(3):
        drawn = await api.client.post(
            f"/api/activities/{ACTIVITY}/draws", headers={**player, "Idempotency-Key": f"k{n}"}
        )
        assert drawn.status_code == 201, drawn.text
    [warned] = await warnings()
    assert (warned["left"], warned["warned"]) == (2, True)

    refused = await api.client.get(path, headers=player)
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")
    unknown = await api.client.get("/api/admin/activities/999/stock-warnings", headers=admin)
    assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_activity")

    await relay(api.raffle.shards, api.raffle.broker, api.raffle.clock)
    logged = [json.loads(line) for line in server_log.getvalue().splitlines()]
    [notice] = [line for line in logged if "operators' notice" in line.get("event", "")]
    body = json.loads(notice["event"].partition(": ")[2])
    assert (body["kind"], body["left"], body["warning_surplus"]) == ("stock_warning", 2, 2)
