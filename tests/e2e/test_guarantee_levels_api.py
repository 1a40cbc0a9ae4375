"""A guarantee by level over HTTP: the published odds name the level and the prizes it makes;
a simulation of 100,000 draws by users drawing ten times each matches them draw number by draw
number (χ²); a level no prize has is refused at load; while the activity runs a level change
that would move a prize into or out of the promise is refused, and one that would not is not."""

from __future__ import annotations

import uuid
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

LEVELS = Path(__file__).parents[2] / "examples" / "guaranteed-levels.yaml"
TEXT = LEVELS.read_text(encoding="utf-8").replace(
    "    welcome_pack: 1\n", "    state: running\n    welcome_pack: 1\n"
)
ODDS = "/api/activities/1"
CAMPAIGNS = "/api/admin/campaigns"


def prize(award_id: int) -> str:
    return f"/api/admin/strategies/1/prizes/{award_id}"


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    """The example campaign with its activity running."""
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'raffle.db'}", draws_per_second=1000)
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await load_campaign(parse_campaign(TEXT, "levels"), raffle.uow())
    await raffle.start()
    transport = httpx.ASGITransport(app=create_app(raffle, scheduler=False))
    async with httpx.AsyncClient(transport=transport, base_url="http://raffle.test") as client:
        yield Api(raffle, client)
    await raffle.close()


async def test_the_published_odds_name_the_level_and_its_prizes(api: Api) -> None:
    [rule] = (await api.client.get(ODDS)).json()["rules"]
    assert (rule["rule"], rule["draw"], rule["level"], rule["award_ids"]) == (
        "guarantee", 10, 3, [3, 4, 5]
    )  # fmt: skip
    assert rule["titles"] == ["小米台灯", "小米手机", "小米手环"]
    assert rule["chances"] == [
        {"award_id": 3, "chance": "5/16"},
        {"award_id": 4, "chance": "1/16"},
        {"award_id": 5, "chance": "5/8"},
    ]
    assert rule["text"] == (
        "A user's draw 10 in this activity wins a prize of level 3 or better, one of: "
        "小米台灯, 小米手机, 小米手环."
    )


async def test_a_simulation_matches_the_published_odds_draw_by_draw(api: Api) -> None:
    published = (await api.client.get(ODDS)).json()
    ordinary = {p["award_id"]: Fraction(p["rate"]) for p in published["prizes"]}
    ordinary[published["fallback_award_id"]] = Fraction(published["fallback_rate"])
    guaranteed = {
        r["draw"]: {c["award_id"]: Fraction(c["chance"]) for c in r["chances"]}
        for r in published["rules"]
    }
    [engine] = parse_campaign(TEXT, "levels").engines().values()
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
    assert fit.degrees_of_freedom == 9 * 4 + 2  # draws 1-9: 5 outcomes; draw 10: 3 prizes
    assert fit.p_value is not None
    assert fit.p_value > 1e-3, fit
    assert {p.award_id for p in result.by_draw[9].prizes} == {3, 4, 5}  # every tenth: level ≤ 3


async def test_a_level_no_prize_has_is_refused_at_load_and_nothing_stored(api: Api) -> None:
    admin = {**await api.login("root", admin=True), "content-type": "application/yaml"}
    other = TEXT.replace("  - id: 1\n    description", "  - id: 2\n    description").replace(
        '"10:level<=3"', '"10:level<=3 20:level<=1"'
    )
    other = other.replace("level: 1, level_name: 一等奖", "level: 2, level_name: 二等奖")
    other = other.replace("    strategy: 1\n", "    strategy: 2\n")
    other = other.replace("  - id: 1\n    name", "  - id: 2\n    name")
    answer = await api.client.post(CAMPAIGNS, headers=admin, content=other)
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_campaign_file")
    assert answer.json()["errors"] == [
        {
            "at": "strategies.0.rules.guarantee",
            "message": "guarantee 20: no prize has level 1 or better",
            "line": 17,
        }
    ]
    assert (await api.client.get("/api/activities/2")).status_code == 404


async def test_a_running_guarantee_keeps_its_prizes_when_levels_change(api: Api) -> None:
    admin = await api.login("root", admin=True)
    before = (await api.client.get(ODDS)).json()["rules"]

    async def relevel(award_id: int, level: int | None) -> httpx.Response:
        key = {"idempotency-key": str(uuid.uuid4())}
        return await api.client.patch(
            prize(award_id), json={"level": level}, headers={**admin, **key}
        )

    for award_id, level in ((2, 3), (5, 4), (4, None)):  # into or out of the promise
        answer = await relevel(award_id, level)
        assert (answer.status_code, answer.json()["code"]) == (409, "odds_frozen"), answer.text
    for award_id, level in ((2, 7), (5, 1), (3, 3)):  # the same prizes stay level 3 or better
        assert (await relevel(award_id, level)).status_code == 200
    after = (await api.client.get(ODDS)).json()
    assert after["rules"] == before
    assert {p["award_id"]: p["card"]["level"] for p in after["prizes"]} == {2: 7, 5: 1, 3: 3, 4: 1}
    file = {**admin, "content-type": "application/yaml"}
    promoted = TEXT.replace("{award: 2, rate: 0.3}", "{award: 2, rate: 0.3, level: 2}")
    answer = await api.client.post(CAMPAIGNS, headers=file, content=promoted)
    assert (answer.status_code, answer.json()["code"]) == (409, "odds_frozen")
