"""The winners' feed over HTTP on the embedded default: public, wins only, masked, paged by
cursor and by `after`; a hidden feed and bad cursors refused with their codes."""

from __future__ import annotations

import base64
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
from raffle.service.winners_feed import FeedCache
from raffle.settings import Settings
from tests.e2e.conftest import Api

CAPPED = Path(__file__).parents[2] / "examples" / "capped.yaml"  # every draw wins
FEED = "/api/activities/1/winners"
PROBLEM = "application/problem+json"


def _running(display: str) -> str:
    text = CAPPED.read_text(encoding="utf-8")
    text = text.replace("    welcome_pack: 1\n", "    state: running\n    welcome_pack: 1\n")
    return text.replace("show_winning_list: ticker", f"show_winning_list: {display}")


async def _api(tmp_path: Path, display: str) -> AsyncIterator[Api]:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'raffle.db'}", draws_per_second=1000)
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await load_campaign(parse_campaign(_running(display), "capped"), raffle.uow())
    await raffle.start()
    transport = httpx.ASGITransport(app=create_app(raffle, scheduler=False))
    async with httpx.AsyncClient(transport=transport, base_url="http://raffle.test") as client:
        yield Api(raffle, client)
    await raffle.close()


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    async for made in _api(tmp_path, "tiled"):
        yield made


@pytest.fixture
async def hidden(tmp_path: Path) -> AsyncIterator[Api]:
    async for made in _api(tmp_path, "hidden"):
        yield made


async def _win(api: Api, name: str) -> dict[str, object]:
    player = await api.login(name)
    drawn = await api.client.post("/api/activities/1/draws", headers=player)
    assert drawn.status_code == 201, drawn.text
    found: dict[str, object] = drawn.json()
    return found


async def test_the_feed_pages_wins_masked_newest_first(api: Api) -> None:
    odds = (await api.client.get("/api/activities/1")).json()
    assert odds["activity"]["show_winning_list"] == "tiled"
    won = [await _win(api, name) for name in ("alice", "bobby", "carol")]
    first = await api.client.get(FEED, params={"limit": 2})  # public: no session
    assert first.status_code == 200, first.text
    page = first.json()
    assert page["display"] == "tiled"
    assert [(w["winner"], w["award_id"]) for w in page["wins"]] == [
        ("c***l", won[2]["award_id"]),
        ("b***y", won[1]["award_id"]),
    ]
    assert "carol" not in first.text
    older = (await api.client.get(FEED, params={"limit": 2, "cursor": page["next"]})).json()
    assert [w["winner"] for w in older["wins"]] == ["a***e"]
    assert older["next"] is None

    await _win(api, "dorian")
    newer = (await api.client.get(FEED, params={"after": page["newer"]})).json()
    assert [w["winner"] for w in newer["wins"]] == ["d***n"]
    again = (await api.client.get(FEED, params={"after": newer["newer"]})).json()
    assert again["wins"] == []
    assert again["newer"] == newer["newer"]


async def test_the_first_page_is_kept_a_moment_per_process(api: Api) -> None:
    api.raffle.feed = FeedCache(ttl=3600)  # a moment longer than this test, however slow
    await _win(api, "alice")
    assert len((await api.client.get(FEED)).json()["wins"]) == 1
    await _win(api, "bobby")
    # the kept page; another limit is another page
    assert len((await api.client.get(FEED)).json()["wins"]) == 1
    assert len((await api.client.get(FEED, params={"limit": 9})).json()["wins"]) == 2


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"cursor": "bm90LWEta2V5"}, "invalid_cursor"),  # "not-a-key"
        ({"cursor": base64.urlsafe_b64encode(b"abc.x").decode().rstrip("=")}, "invalid_cursor"),
        ({"cursor": "YWJj", "after": "YWJj"}, "invalid_cursor"),
        ({"cursor": "a b"}, "invalid_input"),
        ({"limit": 51}, "invalid_input"),
        ({"limit": 0}, "invalid_input"),
    ],
)
async def test_bad_cursors_and_limits_are_refused(
    api: Api, params: dict[str, object], code: str
) -> None:
    answer = await api.client.get(FEED, params=params)
    assert answer.status_code == 422
    assert answer.headers["content-type"] == PROBLEM
    assert answer.json()["code"] == code


async def test_a_hidden_feed_answers_404(hidden: Api) -> None:
    await _win(hidden, "alice")
    answer = await hidden.client.get(FEED)
    assert answer.status_code == 404
    assert answer.json()["code"] == "feed_hidden"
    unknown = await hidden.client.get("/api/activities/424242/winners")
    assert unknown.json()["code"] == "unknown_activity"
