"""Disclosed rules over HTTP: the published odds show the listed users (how many, never who)
and each guarantee; draws keep them; a simulation of 100,000 draws by users drawing ten times
each matches the odds as published, draw number by draw number (χ²); they are frozen."""

from __future__ import annotations

from collections.abc import AsyncIterator
from fractions import Fraction
from pathlib import Path

import httpx
import pytest

from raffle.adapters.campaign_file import parse_campaign
from raffle.adapters.memory_stock import MemoryStock
from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.randomness import SeededRandomSource
from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import bootstrap
from raffle.entrypoints.http.app import create_app
from raffle.service.campaigns import load_campaign
from raffle.service.simulation import simulate_users
from raffle.service.statistics import chi_square, combined
from raffle.settings import Settings
from tests.e2e.conftest import Api

GUARANTEED = Path(__file__).parents[2] / "examples" / "guaranteed.yaml"
TEXT = GUARANTEED.read_text(encoding="utf-8").replace(
    "    welcome_pack: 1\n", "    state: running\n    welcome_pack: 1\n"
)
ODDS = "/api/activities/1"
DRAWS = "/api/activities/1/draws"


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    """The example campaign with its activity running."""
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'raffle.db'}", draws_per_second=1000)
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await load_campaign(parse_campaign(TEXT, "guaranteed"), raffle.uow())
    await raffle.start()
    transport = httpx.ASGITransport(app=create_app(raffle, scheduler=False))
    async with httpx.AsyncClient(transport=transport, base_url="http://raffle.test") as client:
        yield Api(raffle, client)
    await raffle.close()


async def test_the_published_odds_show_the_listed_users_and_the_guarantees(api: Api) -> None:
    answer = await api.client.get(ODDS)
    rules = answer.json()["rules"]
    assert [(r["rule"], r["award_ids"], r["users"], r["draw"]) for r in rules] == [
        ("listed", [5], 3, None),
        ("guarantee", [2, 3, 4], None, 1),
        ("guarantee", [3, 4], None, 10),
    ]
    assert rules[0]["text"].startswith("3 listed users get only 1 积分 on every draw")
    assert rules[1]["chances"] == [
        {"award_id": 2, "chance": "5/6"},
        {"award_id": 3, "chance": "5/36"},
        {"award_id": 4, "chance": "1/36"},
    ]
    assert rules[2]["chances"] == [
        {"award_id": 3, "chance": "5/6"},
        {"award_id": 4, "chance": "1/6"},
    ]
    assert all(r["in_force"] for r in rules)
    assert "user00" not in answer.text  # the group's size, never its members


async def test_draws_keep_the_published_rules(api: Api) -> None:
    ann, listed = await api.login("ann"), await api.login("user002")
    drawn = [(await api.client.post(DRAWS, headers=ann)).json() for _ in range(10)]
    assert [d["draw_count"] for d in drawn] == list(range(1, 11))
    assert (drawn[0]["rule"], drawn[9]["rule"]) == ("guarantee", "guarantee")
    assert drawn[0]["award_id"] in {2, 3, 4}
    assert drawn[9]["award_id"] in {3, 4}
    theirs = [(await api.client.post(DRAWS, headers=listed)).json() for _ in range(10)]
    assert {(d["award_id"], d["rule"]) for d in theirs} == {(5, "listed")}


async def test_a_simulation_matches_the_published_odds_draw_by_draw(api: Api) -> None:
    published = (await api.client.get(ODDS)).json()
    ordinary = {p["award_id"]: Fraction(p["rate"]) for p in published["prizes"]}
    ordinary[published["fallback_award_id"]] = Fraction(published["fallback_rate"])
    guaranteed = {
        r["draw"]: {c["award_id"]: Fraction(c["chance"]) for c in r["chances"]}
        for r in published["rules"]
        if r["rule"] == "guarantee"
    }
    [engine] = parse_campaign(TEXT, "guaranteed").engines().values()
    users, each = 10_000, 10
    result = simulate_users(
        engine, users, each, SeededRandomSource(2026), MemoryStock([engine.strategy])
    )
    fits = []
    for n, by_draw in enumerate(result.by_draw, 1):
        odds = guaranteed.get(n, ordinary)
        counts = {p.award_id: p.count for p in by_draw.prizes}
        ids = sorted(set(odds) | set(counts))
        fits.append(
            chi_square(
                [counts.get(a, 0) for a in ids], [float(odds.get(a, 0) * users) for a in ids]
            )
        )
    fit = combined(fits)
    assert result.draws == 100_000
    assert fit.degrees_of_freedom == 2 + 8 * 3 + 1  # draw 1: 3 prizes; 2-9: 4; draw 10: 2
    assert fit.p_value is not None
    assert fit.p_value > 1e-3, fit
    assert {p.award_id for p in result.by_draw[0].prizes} == {2, 3, 4}  # every first draw won


async def test_the_rules_are_frozen_with_the_odds(api: Api) -> None:
    admin = {**await api.login("root", admin=True), "content-type": "application/yaml"}
    for changed in (
        TEXT.replace('guarantee: "1:win 10:3,4"', 'guarantee: "1:win 10:4"'),
        TEXT.replace("user001,user002,user003", "user001,user002"),
    ):
        answer = await api.client.post("/api/admin/campaigns", headers=admin, content=changed)
        assert (answer.status_code, answer.json()["code"]) == (409, "odds_frozen")
    same = await api.client.post("/api/admin/campaigns", headers=admin, content=TEXT)
    assert same.status_code == 200, same.text
    old_name = TEXT.replace("      listed: ", "      blacklist: ")
    assert (
        await api.client.post("/api/admin/campaigns", headers=admin, content=old_name)
    ).status_code == 200
