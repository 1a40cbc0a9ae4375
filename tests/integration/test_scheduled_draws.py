"""Scheduled draws on real servers: entries in flight at the close are in the frozen list or
refused, never lost after its hash; the list sorts by bytes on every database; the worker's
job draws at the draw time and the wins are delivered through RabbitMQ, shown in the feed."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import inspect

from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.bootstrap import Raffle, bootstrap
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award, AwardKind
from raffle.domain.campaign import Campaign
from raffle.domain.draws import WinState
from raffle.domain.scheduled import EntryClosed, entrants_hash, pick_winners, scheduled
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
from raffle.domain.winners_feed import FeedDisplay
from raffle.entrypoints import worker
from raffle.service.campaigns import load_campaign
from raffle.service.scheduled import Scheduler, enter_draw, entrance, pages, public_record
from raffle.service.winners_feed import winners
from raffle.settings import Settings
from tests.integration.delivery_world import drained, fresh_queues
from tests.integration.raffles import SettableClock

ACTIVITY, STRATEGY, THANKS, COINS, LAMP = 7, 70, 71, 72, 73
START = datetime(2026, 11, 25, 2, tzinfo=UTC)
DRAW_AT = START + timedelta(hours=2)
MakeUrl = Callable[[str], Awaitable[str]]


def campaign(winners: int, per_person: int = 1) -> Campaign:
    prizes = (StrategyPrize(COINS, Decimal("0.1")), StrategyPrize(LAMP, Decimal("0.1"), stock=9))
    strategy = Strategy(STRATEGY, prizes, Fallback(THANKS), ())
    activity = Activity(
        ACTIVITY, "at noon", STRATEGY, START - timedelta(days=1), START + timedelta(days=1),
        state=ActivityState.RUNNING, winners_feed=FeedDisplay.TICKER,
        schedule=scheduled(DRAW_AT, winners, per_person=per_person),
    )  # fmt: skip
    awards = (
        Award(THANKS, AwardKind.THANKS, "thanks"),
        Award(COINS, AwardKind.POINTS, "100 points", "100"),
        Award(LAMP, AwardKind.PHYSICAL, "a lamp"),
    )
    return Campaign(awards, (strategy,), (), (activity,))


async def built(settings: Settings, clock: SettableClock, loaded: Campaign) -> Raffle:
    for url in settings.database_urls:
        await upgrade(url, shard_tables=settings.shard_tables)
    raffle = bootstrap(settings, clock=clock)
    await load_campaign(loaded, raffle.uow())
    await raffle.start()
    return raffle


async def enter(raffle: Raffle, user: str) -> bool:
    try:
        await enter_draw(user, ACTIVITY, catalogue=raffle.catalogue, uow=raffle.uow,
                         clock=raffle.clock)  # fmt: skip
    except EntryClosed:
        return False
    return True


async def listed(raffle: Raffle) -> list[str]:
    return [u for page in [p async for p in pages(raffle.uow, ACTIVITY)] for u in page]


@pytest.fixture(params=["postgres", "mariadb"])
async def raffle(
    request: pytest.FixtureRequest, make_database_url: MakeUrl
) -> AsyncIterator[Raffle]:
    first, second = await make_database_url(request.param), await make_database_url(request.param)
    settings = Settings(database_url=first, shard_urls=second, shard_tables=4)
    made = await built(settings, SettableClock(START), campaign(winners=3))
    yield made
    await made.close()


async def test_entries_in_flight_at_the_close_are_frozen_or_refused(raffle: Raffle) -> None:
    odd = ["Zed", "alice", "bob-1", "bob.2", "bob_3", "BOB", "b0b", "Alice"]  # bytes, not case
    users = odd + [f"u{n:04d}" for n in range(400)]
    jobs = Scheduler(raffle.uow, raffle.catalogue, raffle.shards, raffle.clock)
    activity = await raffle.catalogue.activity(ACTIVITY)
    gate = asyncio.Semaphore(40)
    done, midway = 0, asyncio.Event()

    async def one(user: str) -> bool:
        nonlocal done
        async with gate:
            entered = await enter(raffle, user)
            done += 1
            if done == 150:
                midway.set()
            return entered

    async def close_midway() -> None:
        await midway.wait()
        # The cutoff passes with entries in flight: those past the clock's check are in the
        # list or refused, whichever side of the close they commit on.
        raffle.clock.current = DRAW_AT - timedelta(minutes=30)  # type: ignore[attr-defined]
        await jobs.freeze(activity, raffle.clock.now())

    found, _ = await asyncio.gather(asyncio.gather(*(one(u) for u in users)), close_midway())
    accepted = sorted(u for u, ok in zip(users, found, strict=True) if ok)
    assert 150 <= len(accepted) < len(users)  # some entered before, the rest were refused
    assert await listed(raffle) == accepted  # ascending by bytes on this database too
    assert sorted(odd)[:3] == ["Alice", "BOB", "Zed"]
    record = await public_record(activity, uow=raffle.uow, catalogue=raffle.catalogue)
    assert (record.draw.entrants, record.draw.entrants_hash) == (
        len(accepted), entrants_hash(accepted)
    )  # fmt: skip
    raffle.clock.current = START  # type: ignore[attr-defined]
    assert not await enter(raffle, "latecomer")  # frozen: refused, whatever the clock says
    with pytest.raises(EntryClosed):
        await enter_draw("another", ACTIVITY, catalogue=raffle.catalogue, uow=raffle.uow,
                         clock=raffle.clock)  # fmt: skip

    raffle.clock.current = DRAW_AT  # type: ignore[attr-defined]
    assert await jobs.run() == [(ACTIVITY, "drawn"), (ACTIVITY, "recorded")]
    record = await public_record(activity, uow=raffle.uow, catalogue=raffle.catalogue)
    assert record.terms is not None
    assert record.draw.seed is not None
    async with raffle.uow() as uow:
        published = [p for p, _, recorded in await uow.scheduled.winners(ACTIVITY) if recorded]
    assert published == pick_winners(record.terms, record.draw.seed, accepted)
    assert len(published) == 6
    mine = await entrance(published[0].user_id, ACTIVITY, catalogue=raffle.catalogue,
                          uow=raffle.uow)  # fmt: skip
    assert published[0].award_id in mine.won


@contextlib.asynccontextmanager
async def working(raffle: Raffle) -> AsyncIterator[None]:
    task = asyncio.create_task(worker.run(raffle))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_the_worker_draws_at_the_draw_time_and_the_wins_are_delivered(
    make_database_url: MakeUrl, rabbitmq_url: str
) -> None:
    await fresh_queues(rabbitmq_url)
    first, second = await make_database_url("postgres"), await make_database_url("postgres")
    settings = Settings(
        database_url=first, shard_urls=second, shard_tables=4, broker_url=rabbitmq_url,
        publish_timeout_seconds=2.0, republish_after_seconds=3.0,
    )  # fmt: skip
    clock = SettableClock(START)
    raffle = await built(settings, clock, campaign(winners=20, per_person=1))
    try:
        users = [f"p{n:04d}" for n in range(300)]
        gate = asyncio.Semaphore(40)

        async def one(user: str) -> bool:
            async with gate:
                return await enter(raffle, user)

        assert all(await asyncio.gather(*(one(u) for u in users)))
        clock.current = DRAW_AT + timedelta(seconds=1)  # the cutoff and the draw time passed
        async with working(raffle):
            found = await drained(raffle, records=29, within=60)  # 20 coins, 9 lamps (stock)
        assert (found.completed, found.failed) == (29, 0)
        async with raffle.uow() as uow:
            picked = await uow.scheduled.winners(ACTIVITY)
        assert all(recorded for _, _, recorded in picked)
        assert len({p.user_id for p, _, _ in picked}) == 29  # one prize a person
        for pick, order_id, _ in picked:
            async with raffle.shards.for_user(pick.user_id) as shard:
                win = await shard.wins.get(order_id)
                points = await shard.points.account(pick.user_id)
            assert win is not None
            assert win.state is WinState.COMPLETED
            assert win.award_id == pick.award_id
            assert (points.available if points else 0) == (100 if pick.award_id == COINS else 0)
        feed = await winners(ACTIVITY, None, None, 50, catalogue=raffle.catalogue,
                             shards=raffle.shards)  # fmt: skip
        assert sorted(w.award_id for w in feed.wins) == sorted(p.award_id for p, _, _ in picked)
    finally:
        await raffle.close()


async def test_0026_undoes_itself(database_url: str) -> None:
    await upgrade(database_url, shard_tables=4)
    await downgrade(database_url, "0025", shard_tables=4)
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda c: inspect(c).get_table_names())
            columns = await connection.run_sync(
                lambda c: [col["name"] for col in inspect(c).get_columns("activity")]
            )
    finally:
        await engine.dispose()
    assert not {"scheduled_draw", "scheduled_entrant", "scheduled_winner"} & set(names)
    assert "schedule" not in columns
    await upgrade(database_url, shard_tables=4)
