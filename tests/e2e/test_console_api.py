"""What the operator console reads: the configuration exported as a campaign file (that
loads back to the same file) and draws per minute across shards."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from raffle.adapters.campaign_file import parse_campaign, read_campaign
from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import bootstrap
from raffle.domain.campaign import Campaign
from raffle.entrypoints.http.app import create_app
from raffle.settings import Settings
from tests.e2e.conftest import ACTIVITY, DEMO, Api
from tests.unit.test_campaign_file import FIVE_MISTAKES, FIVE_PROBLEMS


def _key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


@pytest.fixture
async def blank(tmp_path: Path) -> AsyncIterator[Api]:
    """A second raffle with an empty database."""
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'blank.db'}")
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await raffle.start()
    transport = httpx.ASGITransport(app=create_app(raffle, scheduler=False))
    async with httpx.AsyncClient(transport=transport, base_url="http://blank.test") as client:
        yield Api(raffle, client)
    await raffle.close()


def _sections(campaign: Campaign) -> dict[str, set[Any]]:
    """Each part of a campaign, in any order (the export writes ids and names in order)."""
    pools = {(p.name, frozenset(p.codes)) for p in campaign.code_pools}
    parts = {f.name: set(getattr(campaign, f.name)) for f in fields(campaign)}
    return parts | {"code_pools": pools}


async def _import(api: Api, auth: dict[str, str], text: str) -> httpx.Response:
    headers = auth | _key() | {"Content-Type": "application/yaml"}
    return await api.client.post("/api/admin/campaigns", content=text, headers=headers)


async def _export(api: Api, auth: dict[str, str], format: str = "yaml") -> httpx.Response:
    answer = await api.client.get(f"/api/admin/campaigns?format={format}", headers=auth)
    assert answer.status_code == 200, answer.text
    return answer


async def test_an_export_imported_into_a_blank_database_exports_the_same_file(
    api: Api, blank: Api
) -> None:
    text = (await _export(api, await api.login("operator", admin=True))).text
    assert _sections(parse_campaign(text, "export")) == _sections(read_campaign(DEMO))
    auth = await blank.login("operator", admin=True)
    loaded = await _import(blank, auth, text)
    assert loaded.status_code == 200, loaded.text
    assert (await _export(blank, auth)).text == text


async def test_the_json_export_is_the_same_document_and_imports_as_it_is(api: Api) -> None:
    auth = await api.login("operator", admin=True)
    text = (await _export(api, auth)).text
    document = (await _export(api, auth, "json")).json()
    assert parse_campaign(yaml.safe_dump(document), "json") == parse_campaign(text, "yaml")
    rates = [p["rate"] for p in document["strategies"][0]["prizes"]]
    assert "0.0001" in rates  # exact decimal text, never a float
    # The console saves the whole document back: unchanged odds of a running activity pass.
    # As the console sends it: JSON text, which is YAML, in a YAML body.
    again = await _import(api, auth, json.dumps(document))
    assert again.status_code == 200, again.text


async def test_changed_odds_of_a_running_activity_are_refused_with_the_state(api: Api) -> None:
    auth = await api.login("operator", admin=True)
    document = (await _export(api, auth, "json")).json()
    document["strategies"][0]["prizes"][0]["rate"] = "0.001"
    answer = await _import(api, auth, json.dumps(document))
    assert (answer.status_code, answer.json()["code"]) == (409, "odds_frozen")
    assert "running" in answer.json()["detail"]


async def test_exported_code_pools_hold_only_the_codes_not_handed_out(api: Api) -> None:
    auth = await api.login("operator", admin=True)
    before = yaml.safe_load((await _export(api, auth)).text)["code_pools"]
    async with api.raffle.uow() as uow:
        pool = next(iter(before))
        assert await uow.code_pools.hand_out(pool, "o" * 24, "u1", datetime.now(UTC))
        await uow.commit()
    text = (await _export(api, auth)).text
    after = yaml.safe_load(text)["code_pools"]
    assert after[pool] == before[pool][1:]  # the first free code went to the order
    assert f"# code pool '{pool}': 1 codes already handed out are not listed" in text


async def test_an_upload_lists_every_problem_of_the_file_with_its_line(api: Api) -> None:
    auth = await api.login("root", admin=True)
    answer = await _import(api, auth, FIVE_MISTAKES)
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_campaign_file")
    errors = answer.json()["errors"]
    assert [e["line"] for e in errors] == [line for line, _ in FIVE_PROBLEMS]
    assert all(m in e["message"] for e, (_, m) in zip(errors, FIVE_PROBLEMS, strict=True))
    assert errors[1]["at"] == "strategies.0.prizes.0.rate"


async def test_export_is_for_operators_only(api: Api) -> None:
    answer = await api.client.get("/api/admin/campaigns", headers=await api.login("dave"))
    assert (answer.status_code, answer.json()["code"]) == (403, "forbidden")


async def test_draws_over_time_counts_this_minutes_draws_across_users(api: Api) -> None:
    for name in ("erin", "frank"):
        auth = await api.login(name)
        for _ in range(2):
            drawn = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=auth)
            assert drawn.status_code == 201, drawn.text
    op = await api.login("operator", admin=True)
    url = f"/api/admin/activities/{ACTIVITY}/draws-over-time?minutes=5"
    series = (await api.client.get(url, headers=op)).json()
    assert len(series) == 5
    minutes = [datetime.fromisoformat(p["minute"]) for p in series]
    assert all(b - a == timedelta(minutes=1) for a, b in pairwise(minutes))
    assert sum(p["draws"] for p in series) == 4
    assert series[-1]["draws"] in (0, 4)  # 0 only if the minute turned since the draws


async def test_draws_over_time_refuses_unknown_activities_and_bad_windows(api: Api) -> None:
    op = await api.login("operator", admin=True)
    unknown = await api.client.get("/api/admin/activities/1/draws-over-time", headers=op)
    assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_activity")
    url = f"/api/admin/activities/{ACTIVITY}/draws-over-time?minutes=0"
    bad = await api.client.get(url, headers=op)
    assert (bad.status_code, bad.json()["code"]) == (422, "invalid_input")
