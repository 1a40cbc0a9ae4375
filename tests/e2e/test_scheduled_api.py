"""Scheduled draws over HTTP (SQLite): entries until the cutoff then `entry_closed`, the list
frozen and its hash published, the winners picked at the draw time, each entrant told."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award, AwardKind
from raffle.domain.campaign import Campaign
from raffle.domain.policies import Participation, PersonCaps, Policy
from raffle.domain.scheduled import scheduled
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
from raffle.entrypoints.cli import main
from raffle.service.campaigns import load_campaign
from raffle.service.scheduled import Scheduler, verify_draw
from tests.e2e.conftest import Api

SCHEDULED, STRATEGY, LAMP, THANKS = 900, 90, 91, 92
PLAYERS = ("alice", "bob", "carol", "dave")


class Later:
    """The real time moved on by `ahead`."""

    def __init__(self) -> None:
        self.ahead = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.ahead


async def _load(
    api: Api,
    now: datetime,
    audience: str | None = None,
    winners: int = 2,
    participation: Participation | None = None,
) -> None:
    strategy = Strategy(
        STRATEGY, (StrategyPrize(LAMP, Decimal("0.1"), stock=5),), Fallback(THANKS), ()
    )
    activity = Activity(
        SCHEDULED, "lamps at noon", STRATEGY, now - timedelta(days=1), now + timedelta(days=1),
        state=ActivityState.RUNNING,
        schedule=scheduled(now + timedelta(hours=1), winners, audience=audience),
    )  # fmt: skip
    awards = (Award(THANKS, AwardKind.THANKS, "thanks"), Award(LAMP, AwardKind.PHYSICAL, "lamp"))
    taking = () if participation is None else (participation,)
    loaded = Campaign(awards, (strategy,), (), (activity,), participations=taking)
    await load_campaign(loaded, api.raffle.uow())
    api.raffle.catalogue.forget()


async def test_entries_close_at_the_cutoff_and_every_entrant_learns_the_outcome(
    api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = api.raffle.clock = Later()
    await _load(api, clock.now())
    root = await api.login("root", admin=True)
    players = {name: await api.login(name) for name in PLAYERS}
    entry = f"/api/activities/{SCHEDULED}/entry"

    first = await api.client.post(entry, headers=players["alice"])
    assert first.status_code == 200, first.text
    assert first.json()["stage"] == "open"
    again = await api.client.post(entry, headers=players["alice"])
    assert again.json()["entered_at"] == first.json()["entered_at"]
    for name in ("bob", "carol"):
        assert (await api.client.post(entry, headers=players[name])).status_code == 200
    drawn = await api.client.post(f"/api/activities/{SCHEDULED}/draws", headers=players["bob"])
    assert (drawn.status_code, drawn.json()["code"]) == (409, "draws_at_set_time")
    unknown = await api.client.get(entry, headers=players["dave"])
    assert (unknown.status_code, unknown.json()["code"]) == (404, "not_entered")
    before = (await api.client.get(f"/api/activities/{SCHEDULED}/fairness")).json()["scheduled"]
    assert (before["seed"], before["entrants_hash"], before["entrants"]) == (None, None, None)
    commitment = before["commitment"]
    too_early = await api.client.get(f"/api/admin/activities/{SCHEDULED}/entrants", headers=root)
    assert (too_early.status_code, too_early.json()["code"]) == (409, "entrants_not_frozen")

    clock.ahead = timedelta(minutes=31)  # past the cutoff, before the draw
    late = await api.client.post(entry, headers=players["dave"])
    assert (late.status_code, late.json()["code"]) == (409, "entry_closed")
    jobs = Scheduler(api.raffle.uow, api.raffle.catalogue, api.raffle.shards, clock)
    assert await jobs.run() == [(SCHEDULED, "frozen")]
    assert await jobs.run() == []  # nothing more before the draw time
    frozen = (await api.client.get(f"/api/activities/{SCHEDULED}/scheduled-draw")).json()
    listed = b"alice\nbob\ncarol\n"
    assert frozen["entrants_hash"] == hashlib.sha256(listed).hexdigest()
    assert (frozen["entrants"], frozen["prizes"], frozen["seed"]) == (3, [[LAMP, 2]], None)
    assert frozen["commitment"] == commitment
    file = await api.client.get(f"/api/admin/activities/{SCHEDULED}/entrants", headers=root)
    assert file.content == listed
    assert (await api.client.get(entry, headers=players["bob"])).json()["stage"] == "frozen"

    clock.ahead = timedelta(hours=1, seconds=1)
    assert await jobs.run() == [(SCHEDULED, "drawn"), (SCHEDULED, "recorded")]
    assert await jobs.run() == []
    after = (await api.client.get(f"/api/activities/{SCHEDULED}/fairness")).json()["scheduled"]
    assert hashlib.sha256(bytes.fromhex(after["seed"])).hexdigest() == commitment
    won = {
        name: (await api.client.get(entry, headers=players[name])).json()["won"]
        for name in ("alice", "bob", "carol")
    }
    assert sorted(len(w) for w in won.values()) == [0, 1, 1]
    assert all(w in ([], [LAMP]) for w in won.values())
    winner = next(name for name, w in won.items() if w)
    history = await api.client.get(f"/api/activities/{SCHEDULED}/draws", headers=players[winner])
    assert [d["award_id"] for d in history.json()["draws"]] == [LAMP], history.text

    # The auditor's check: the list file, the revealed seed and the published terms.
    monkeypatch.setenv("RAFFLE_DATABASE_URL", api.raffle.settings.database_url)
    (tmp_path / "entrants.txt").write_bytes(file.content)
    cli = CliRunner()
    # In a thread: the command runs its own event loop.
    checked = await asyncio.to_thread(
        cli.invoke, main, ["verify-draw", str(SCHEDULED), str(tmp_path / "entrants.txt")]
    )
    assert (checked.exit_code, checked.output) == (0, f"activity {SCHEDULED}: matches\n")
    (tmp_path / "other.txt").write_bytes(b"alice\nbob\ncarol\nmallory\n")
    other = await asyncio.to_thread(
        cli.invoke, main, ["verify-draw", str(SCHEDULED), str(tmp_path / "other.txt")]
    )
    assert other.exit_code == 1
    assert "entrants_hash" in other.output


async def test_only_entrants_in_the_draws_audience_win_and_the_others_met_are_listed(
    api: Api,
) -> None:
    clock = api.raffle.clock = Later()
    root = await api.login("root", admin=True)
    key = {"Idempotency-Key": "beta-tag"}
    tag = await api.client.put("/api/admin/tags/beta", json={"kind": "static"}, headers=root | key)
    assert tag.status_code == 200, tag.text
    members = {"user_ids": ["mem0", "mem1", "mem2"]}
    added = await api.client.post("/api/admin/tags/beta/members", json=members, headers=root)
    assert added.status_code == 200, added.text
    await _load(api, clock.now(), audience="beta", winners=3)
    entrants = ["mem0", "mem1", "mem2", *(f"out{n:02d}" for n in range(12))]
    for name in entrants:
        answer = await api.client.post(
            f"/api/activities/{SCHEDULED}/entry", headers=await api.login(name)
        )
        assert answer.status_code == 200, answer.text
    jobs = Scheduler(
        api.raffle.uow, api.raffle.catalogue, api.raffle.shards, clock, api.raffle.profiles,
        api.raffle.tags,
    )  # fmt: skip
    clock.ahead = timedelta(hours=1, seconds=1)
    assert await jobs.run() == [
        (SCHEDULED, "frozen"),
        (SCHEDULED, "drawn"),
        (SCHEDULED, "recorded"),
    ]
    async with api.raffle.uow() as uow:
        won = [p.user_id for p, _, _ in await uow.scheduled.winners(SCHEDULED)]
    assert sorted(won) == ["mem0", "mem1", "mem2"]  # all three members, nobody else
    record = (await api.client.get(f"/api/activities/{SCHEDULED}/scheduled-draw")).json()
    assert set(record["skipped"]) <= set(entrants[3:])
    # The outsiders the shuffle met before the third member, as published: the winners
    # computed again from them match.
    listed = "".join(f"{u}\n" for u in sorted(entrants)).encode()
    activity = await api.raffle.catalogue.activity(SCHEDULED)
    verdict = await verify_draw(
        activity, listed, uow=api.raffle.uow, catalogue=api.raffle.catalogue
    )
    assert (verdict.drawn, verdict.differs) == (True, ())


async def test_the_policies_admit_entries_as_they_admit_draws(api: Api) -> None:
    now = datetime.now(UTC)
    caps_only = Participation(SCHEDULED, caps=PersonCaps(once_per_prize=True))
    await _load(api, now, participation=caps_only)
    entry = f"/api/activities/{SCHEDULED}/entry"
    anyone = await api.client.post(entry, headers=await api.login("anyone"))
    assert anyone.status_code == 200, anyone.text  # caps alone turn nobody away
    vip_only = Participation(SCHEDULED, (Policy(1, 1, tag="vip"),), caps_only.caps)
    await _load(api, now, participation=vip_only)
    refused = await api.client.post(entry, headers=await api.login("outsider"))
    assert (refused.status_code, refused.json()["code"]) == (403, "not_admitted")
    assert refused.json()["refusals"] == [{"policy_id": 1, "reason": "not_in_audience"}]


async def test_an_upload_marking_a_scheduled_activity_queued_is_refused_at_its_line(
    api: Api,
) -> None:
    await _load(api, datetime.now(UTC))
    root = await api.login("root", admin=True)
    exported = await api.client.get("/api/admin/campaigns", headers=root)
    assert exported.status_code == 200, exported.text
    lines = exported.text.splitlines()
    at = lines.index(f"- id: {SCHEDULED}")
    kind = next(i for i in range(at, len(lines)) if lines[i].strip() == "kind: scheduled")
    lines.insert(kind, lines[kind].replace("kind: scheduled", "queued: true"))
    both = "\n".join(lines) + "\n"
    headers = root | {"Content-Type": "application/yaml", "Idempotency-Key": str(uuid.uuid4())}
    answer = await api.client.post("/api/admin/campaigns", content=both, headers=headers)
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_campaign_file")
    (problem,) = answer.json()["errors"]
    assert problem["reason"] == "queued_and_scheduled"
    assert problem["line"] == kind + 1
    assert problem["at"].endswith(".queued")
    assert "not both" in problem["message"]
    after = await api.client.get("/api/admin/campaigns", headers=root)
    assert after.text == exported.text  # nothing stored
    drawn = await api.client.post(f"/api/activities/{SCHEDULED}/draws", headers=root)
    assert (drawn.status_code, drawn.json()["code"]) == (409, "draws_at_set_time")  # no ticket
