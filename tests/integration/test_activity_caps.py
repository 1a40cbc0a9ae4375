"""Activity-wide caps on real servers: total winners and total participants hold across
every shard under hundreds of draws in flight, and a draw that does not commit gives its
cap slots back."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from datetime import timedelta

import pytest

from raffle.bootstrap import Raffle
from raffle.domain.campaign import Campaign
from raffle.domain.caps import CAPPED, ActivityFull, Cap, Caps
from raffle.domain.draws import OutboxMessage, RaffleOrder, Win
from raffle.domain.quota import NoChances, QuotaPack
from raffle.service import draw_batch, drawing
from raffle.service.cap_counts import cap_report
from raffle.service.draw import Draw, DrawResult, draw
from raffle.service.drawing import Drawn, give_back_prize, records, take_prize
from raffle.service.ports import Attempt
from raffle.service.stock_sync import sync_caps
from tests.integration.raffles import (
    ACTIVITY,
    PRIZE,
    STRATEGY,
    THANKS,
    WELCOME,
    Build,
    SettableClock,
    campaign,
)
from tests.integration.test_draw_concurrency import assert_batched, wins_in_database

IN_FLIGHT = 250
Records = tuple[RaffleOrder, Win, OutboxMessage]
STOCK = 5000


def capped(caps: Caps, *, rate: str = "1", pack: QuotaPack | None = None) -> Campaign:
    """The test campaign (one stocked prize at `rate`, "thanks" as the fallback), with caps."""
    loaded = campaign(rate=rate, stock=STOCK, pack=pack or QuotaPack(WELCOME, 20, 20, 20))
    return replace(loaded, activities=(replace(loaded.activities[0], caps=caps),))


async def draws(
    raffle: Raffle, cmds: list[Draw], also: tuple[type[Exception], ...] = ()
) -> list[DrawResult | Exception]:
    """Every draw at once, at most IN_FLIGHT at a time; each refusal (and error of a kind
    in `also`) as its error."""
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(cmd: Draw) -> DrawResult | Exception:
        async with gate:
            try:
                return await draw(
                    cmd, catalogue=raffle.catalogue, shards=raffle.shards, stock=raffle.stock,
                    rng=raffle.rng, clock=raffle.clock, hints=raffle.hints, caps=raffle.caps,
                )  # fmt: skip
            except (ActivityFull, NoChances, *also) as refused:
                return refused

    return await asyncio.gather(*(one(cmd) for cmd in cmds))


async def report(raffle: Raffle) -> dict[Cap, tuple[int, int, int]]:
    """Per cap: (claims, counted by the award rows, leaked)."""
    ledger = raffle.cap_ledger
    found = await cap_report(raffle.uow, raffle.shards, ACTIVITY, ledger.counts if ledger else None)
    return {d.cap: (d.claims, d.counted, d.leaked) for d in found}


async def test_a_thousand_users_racing_for_fifty_winners_make_exactly_fifty(build: Build) -> None:
    raffle = await build(capped(Caps(winners=50)), None)

    results = await draws(raffle, [Draw(f"user{u:04d}", ACTIVITY) for u in range(1000)])

    assert all(isinstance(r, DrawResult) for r in results), Counter(map(type, results))
    outcomes = Counter((r.award_id, r.rule) for r in results if isinstance(r, DrawResult))
    assert outcomes == Counter({(PRIZE, "default"): 50, (THANKS, CAPPED): 950})
    assert await wins_in_database(raffle) == 50
    # The draws the cap turned into the fallback took no unit of the prize.
    assert await raffle.stock.left(STRATEGY, PRIZE) == STOCK - 50
    assert await report(raffle) == {Cap.WINNERS: (50, 50, 0)}
    assert await raffle.caps.left(ACTIVITY, int(Cap.WINNERS)) == 0  # type: ignore[union-attr]
    assert_batched(raffle)  # many draws shared transactions


async def test_participants_beyond_the_cap_are_refused_and_those_in_keep_drawing(
    build: Build,
) -> None:
    raffle = await build(capped(Caps(participants=30), rate="0.5"), None)
    users = [f"user{u:03d}" for u in range(300)]

    results = await draws(raffle, [Draw(u, ACTIVITY) for _ in range(2) for u in users])

    drawn = [r for r in results if isinstance(r, DrawResult)]
    refused = [r for r in results if not isinstance(r, DrawResult)]
    assert {type(r) for r in refused} == {ActivityFull}
    # Each admitted user drew twice: the second draw of a user already in takes no slot.
    admitted = Counter(r.draw_count for r in drawn)
    assert admitted == Counter({1: 30, 2: 30})
    assert len(refused) == 600 - 60
    assert await report(raffle) == {Cap.PARTICIPANTS: (30, 30, 0)}
    # Full now: a participant already in still draws; a new one is still refused.
    insider = await _insider(raffle, users)
    (again, newcomer) = await draws(raffle, [Draw(insider, ACTIVITY), Draw("late", ACTIVITY)])
    assert isinstance(again, DrawResult)
    assert again.draw_count == 3
    assert isinstance(newcomer, ActivityFull)


async def _insider(raffle: Raffle, users: list[str]) -> str:
    for user in users:
        async with raffle.shards.for_user(user) as uow:
            if await uow.orders.history(user, ACTIVITY, None, 1):
                return user
    raise AssertionError("nobody was admitted")


async def test_a_draw_that_does_not_commit_gives_its_cap_slots_back(build: Build) -> None:
    raffle = await build(capped(Caps(winners=5, participants=5)), None)
    activity = await raffle.catalogue.activity(ACTIVITY)
    engine = await raffle.catalogue.engine(activity)
    assert raffle.caps is not None
    await raffle.caps.prepare(ACTIVITY)
    attempt = Attempt(
        Draw("lost", ACTIVITY), activity, engine, None, raffle.stock, raffle.rng,
        raffle.clock.now(), raffle.caps,
    )  # fmt: skip

    taken = await take_prize(attempt, 1)  # a first draw that wins: both caps' slots
    assert set(taken.caps) == {Cap.PARTICIPANTS, Cap.WINNERS}
    assert await raffle.caps.left(ACTIVITY, int(Cap.WINNERS)) == 4
    await give_back_prize(attempt, taken)  # what the draw store does when it does not commit

    assert await raffle.caps.left(ACTIVITY, int(Cap.WINNERS)) == 5
    assert await raffle.caps.left(ACTIVITY, int(Cap.PARTICIPANTS)) == 5
    assert await raffle.stock.left(STRATEGY, PRIZE) == STOCK
    assert await report(raffle) == {Cap.WINNERS: (0, 0, 0), Cap.PARTICIPANTS: (0, 0, 0)}
    # And the slots serve the next draws: five users win, the sixth is refused.
    results = await draws(raffle, [Draw(f"next{u}", ACTIVITY) for u in range(6)])
    assert sorted(type(r).__name__ for r in results) == ["ActivityFull"] + ["DrawResult"] * 5
    assert await report(raffle) == {Cap.WINNERS: (5, 5, 0), Cap.PARTICIPANTS: (5, 5, 0)}


class Doomed(Exception):
    """What fails the draws of one user after their prize and cap slots were taken."""


async def test_draws_that_fail_after_taking_their_slots_leak_none(
    build: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Recording fails for one user's draws: inside the draw's transaction, after the prize,
    # the participant's and the winner's slots were taken. The
    # whole batch rolls back and its other draws go again one per batch.
    raffle = await build(capped(Caps(winners=20, participants=60)), None)

    def failing(attempt: Attempt, drawn: Drawn) -> Records:
        if attempt.cmd.user_id.startswith("doomed"):
            raise Doomed(attempt.cmd.user_id)
        return records(attempt, drawn)

    monkeypatch.setattr(drawing, "records", failing)
    monkeypatch.setattr(draw_batch, "records", failing)
    users = [f"doomed{u}" for u in range(10)] + [f"user{u:03d}" for u in range(100)]

    results = await draws(raffle, [Draw(u, ACTIVITY) for u in users], also=(Doomed,))

    # A doomed user may also find the places all held (a refusal before recording).
    assert {type(r) for r in results[:10]} <= {Doomed, ActivityFull}
    assert any(isinstance(r, Doomed) for r in results[:10])
    admitted = [r for r in results[10:] if isinstance(r, DrawResult)]
    # A doomed draw holds its slots until it fails: a draw meanwhile may find the cap full
    # (a refusal, or the fallback) that is not once the slots are back. The next comers
    # then fill exactly the places left.
    assert 40 <= len(admitted) <= 60
    late = await draws(raffle, [Draw(f"late{u:03d}", ACTIVITY) for u in range(100)])
    admitted += [r for r in late if isinstance(r, DrawResult)]
    assert len(admitted) == 60
    assert sum(r.award_id == PRIZE for r in admitted) == 20
    assert await report(raffle) == {Cap.WINNERS: (20, 20, 0), Cap.PARTICIPANTS: (60, 60, 0)}
    assert await raffle.stock.left(STRATEGY, PRIZE) == STOCK - 20


# Where caps are claimed in a database (with Redis): the embedded default counts them in memory.
@pytest.mark.parametrize(
    "build", ["postgres+redis", "mariadb+redis", "postgres+redis-cluster"], indirect=True
)
async def test_slots_leaked_by_draws_that_died_are_given_back_by_the_sync_job(
    build: Build,
) -> None:
    clock = SettableClock()
    now = clock.current
    raffle = await build(capped(Caps(winners=10, participants=10)), clock)
    assert raffle.caps is not None
    clock.current = now - timedelta(hours=1)  # draws that died an hour ago, slots held
    for n in range(3):
        for cap in Cap:
            assert await raffle.caps.take(ACTIVITY, int(cap), f"dead{n:020d}")
    clock.current = now
    results = await draws(raffle, [Draw(f"user{u}", ACTIVITY) for u in range(10)])
    assert Counter(type(r).__name__ for r in results) == {"DrawResult": 7, "ActivityFull": 3}
    assert await report(raffle) == {Cap.WINNERS: (10, 7, 3), Cap.PARTICIPANTS: (10, 7, 3)}

    async def sync() -> int:
        assert raffle.caps is not None
        assert raffle.cap_ledger is not None
        return await sync_caps(
            config=raffle.uow, shards=raffle.shards, caps=raffle.caps,
            claims=raffle.cap_ledger, before=clock.current - timedelta(minutes=5),
        )  # fmt: skip

    assert await sync() == 6
    assert await sync() == 0  # given back once
    assert await report(raffle) == {Cap.WINNERS: (7, 7, 0), Cap.PARTICIPANTS: (7, 7, 0)}
    results = await draws(raffle, [Draw(f"late{u}", ACTIVITY) for u in range(5)])
    assert sum(isinstance(r, DrawResult) and r.award_id == PRIZE for r in results) == 3
