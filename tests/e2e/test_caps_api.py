"""Activity caps over HTTP on the embedded default: published with the odds, a win turned
into the fallback by the winners cap, a newcomer refused by the participants cap, and the
operator's reconciliation of both."""

from __future__ import annotations

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
from raffle.settings import Settings
from tests.e2e.conftest import Api

CAPPED = Path(__file__).parents[2] / "examples" / "capped.yaml"
ACTIVITY = 1
PROBLEM = "application/problem+json"


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    """The example capped campaign, running, with room for two winners and three
    participants."""
    text = CAPPED.read_text(encoding="utf-8")
    text = text.replace("award_num_limit: 100", "award_num_limit: 2")
    text = text.replace("join_people_total_limit: 300", "join_people_total_limit: 3")
    text = text.replace("    welcome_pack: 1\n", "    state: running\n    welcome_pack: 1\n")
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'raffle.db'}", draws_per_second=1000)
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await load_campaign(parse_campaign(text, "capped"), raffle.uow())
    await raffle.start()
    transport = httpx.ASGITransport(app=create_app(raffle, scheduler=False))
    async with httpx.AsyncClient(transport=transport, base_url="http://raffle.test") as client:
        yield Api(raffle, client)
    await raffle.close()


async def test_caps_are_published_and_hold_over_http(api: Api) -> None:
    odds = (await api.client.get(f"/api/activities/{ACTIVITY}")).json()
    assert odds["activity"]["caps"] == {
        "award_num_limit": 2, "join_people_total_limit": 3, "perfect_activity": True,
    }  # fmt: skip
    assert {p["award_id"]: p["perfect_chance"] for p in odds["prizes"]} == {2: "3/4", 3: "1/4"}
    assert (odds["winners_left"], odds["participants_left"]) == (2, 3)

    players = [await api.login(name) for name in ("ann", "bob", "cyd", "dee")]
    drawn = []
    for player in players[:3]:
        answer = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=player)
        assert answer.status_code == 201, answer.text
        drawn.append(answer.json())
    # 100 % win: the first two won a real prize; the third found the winners cap reached.
    assert [d["award_id"] in (2, 3) for d in drawn] == [True, True, False]
    assert (drawn[2]["award_id"], drawn[2]["rule"]) == (1, "cap")

    refused = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=players[3])
    assert (refused.status_code, refused.headers["content-type"]) == (409, PROBLEM)
    assert refused.json()["code"] == "activity_full"
    again = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=players[0])
    assert (again.status_code, again.json()["draw_count"], again.json()["rule"]) == (201, 2, "cap")

    odds = (await api.client.get(f"/api/activities/{ACTIVITY}")).json()
    assert (odds["winners_left"], odds["participants_left"]) == (0, 0)
    admin = await api.login("root", admin=True)
    report = (await api.client.get(f"/api/admin/activities/{ACTIVITY}/caps", headers=admin)).json()
    assert report == [
        {"cap": "winners", "limit": 2, "claims": 2, "counted": 2, "leaked": 0, "over": 0},
        {"cap": "participants", "limit": 3, "claims": 3, "counted": 3, "leaked": 0, "over": 0},
    ]
    unknown = await api.client.get("/api/admin/activities/999/caps", headers=admin)
    assert unknown.status_code == 404
