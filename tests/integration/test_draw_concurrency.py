"""The draw under load on real servers: no oversell, no double spend, nothing duplicated."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from raffle.adapters.sql.tables.shard import shard_tables
from raffle.bootstrap import Raffle, bootstrap
from raffle.domain.errors import Unavailable
from raffle.domain.quota import NoChances, QuotaPack
from raffle.service.draw import Draw, DrawResult, draw
from raffle.service.draw_batch import BatchedDraws
from raffle.service.ports import DrawBatches
from raffle.service.quotas import my_account
from raffle.service.rebates import sign_in
from raffle.service.reconcile import stock_report
from raffle.settings import Settings
from tests.integration.conftest import redis_settings
from tests.integration.raffles import (
    ACTIVITY,
    PRIZE,
    STRATEGY,
    WELCOME,
    Build,
    SettableClock,
    campaign,
    wired,
)
from tests.integration.test_rebate_concurrency import rebating
from tests.services import RedisClusterServer, RedisServer

IN_FLIGHT = 250


async def answers(raffle: Raffle, draws: list[Draw]) -> list[DrawResult | None]:
    """Every draw at once, at most IN_FLIGHT at a time; None for each refused (NoChances)."""
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(cmd: Draw) -> DrawResult | None:
        async with gate:
            try:
                return await draw(
                    cmd, catalogue=raffle.catalogue, shards=raffle.shards,
                    stock=raffle.stock, rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
                )  # fmt: skip
            except NoChances:
                return None

    return await asyncio.gather(*(one(d) for d in draws))


async def run(raffle: Raffle, draws: list[Draw]) -> tuple[list[DrawResult], Counter[str]]:
    """Every draw at once, at most IN_FLIGHT at a time; results and failures by kind."""
    results = await answers(raffle, draws)
    return [r for r in results if r is not None], Counter(no_chances=results.count(None))


def batches_of(raffle: Raffle) -> DrawBatches:
    """The batches of the draw store: every SQL backend draws in batches."""
    draws = raffle.shards.draws
    assert isinstance(draws, BatchedDraws), "every SQL backend draws in batches"
    return draws.batches


def assert_batched(raffle: Raffle) -> None:
    """The draws went in batches, and batches of several draws formed."""
    assert max(batches_of(raffle).sizes) > 1, batches_of(raffle).sizes


async def wins_in_database(raffle: Raffle) -> int:
    total = 0
    for shard in raffle.shards.every():
        async with shard:
            total += await shard.wins.count(STRATEGY, PRIZE)
    return total


async def test_ten_thousand_draws_never_award_more_than_the_stock(build: Build) -> None:
    raffle = await build(campaign(rate="0.5", stock=100), None)
    draws = [Draw(f"user{u:03d}", 1) for _ in range(20) for u in range(500)]

    results, failures = await run(raffle, draws)

    assert failures == Counter()
    assert len(results) == 10_000
    assert len({r.order_id for r in results}) == 10_000
    assert sum(r.award_id == PRIZE for r in results) == 100
    assert await wins_in_database(raffle) == 100
    assert await raffle.stock.left(STRATEGY, PRIZE) == 0
    assert_batched(raffle)


@pytest.mark.parametrize("limit", ["day", "month", "total"])
async def test_a_thousand_draws_by_one_user_spend_exactly_their_chances(
    build: Build, limit: str
) -> None:
    # Among 49 other users' draws, so that on PostgreSQL the batches hold several users,
    # and one user's draws take turns over batches.
    # At a fixed noon in the activity's zone: on the real clock a run across its midnight
    # (or a month's end) would start the day over halfway and spend three more chances.
    counts = {"total": 100, "day": 100, "month": 100} | {limit: 3}
    clock = SettableClock(datetime(2026, 11, 21, 4, 0, tzinfo=UTC))  # 12:00 +8
    raffle = await build(campaign(pack=QuotaPack(WELCOME, **counts), now=clock.current), clock)
    users = ["solo"] * 1000 + [f"other{u:02d}" for _ in range(10) for u in range(49)]
    draws = [Draw(user, 1) for user in users]

    results = await answers(raffle, draws)

    drawn: dict[str, list[int]] = {}
    for cmd, result in zip(draws, results, strict=True):
        if result is not None:
            drawn.setdefault(cmd.user_id, []).append(result.draw_count)
    assert sorted(drawn.pop("solo")) == [1, 2, 3]
    assert len(drawn) == 49
    assert all(sorted(counts) == [1, 2, 3] for counts in drawn.values())
    assert results.count(None) == 1000 + 490 - 50 * 3
    assert_batched(raffle)


async def test_the_day_rolls_over_at_midnight_in_the_activitys_zone(build: Build) -> None:
    clock = SettableClock(datetime(2026, 11, 21, 15, 59, 59, 900_000, tzinfo=UTC))  # 23:59:59.9 +8
    raffle = await build(campaign(pack=QuotaPack(WELCOME, 100, 3, 100), now=clock.current), clock)
    before, refused = await run(raffle, [Draw("night", 1) for _ in range(10)])
    clock.current = datetime(2026, 11, 21, 16, 0, 0, 100_000, tzinfo=UTC)  # 00:00:00.1 next day
    after, _ = await run(raffle, [Draw("night", 1) for _ in range(10)])
    assert (len(before), refused["no_chances"], len(after)) == (3, 7, 3)
    assert sorted(r.draw_count for r in after) == [4, 5, 6]
    assert batches_of(raffle).sizes == Counter({1: 20})  # one user: a batch of one each time


@pytest.mark.parametrize("opened", [False, True], ids=["new-account", "open-account"])
async def test_one_key_sent_ten_times_at_once_draws_once(build: Build, opened: bool) -> None:
    # With the account open, every try waits for its row lock in the statement that takes
    # the chance; on PostgreSQL the replay lookup rides in that statement, with a snapshot
    # from before the wait, and the tries that miss the first's order must replay it.
    raffle = await build(campaign(), None)
    if opened:
        await run(raffle, [Draw("keen", 1, "opening")])
    results, _ = await run(raffle, [Draw("keen", 1, "same-key") for _ in range(10)])
    assert len({r.order_id for r in results}) == 1
    assert sum(not r.replayed for r in results) == 1
    async with raffle.shards.for_user("keen") as uow:
        account = await uow.quotas.get("keen", 1, "2000-01-01", "2000-01")
    assert account is not None
    assert account.total_left == 19 - opened  # one chance for the key, one for the opening
    assert batches_of(raffle).sizes == Counter({1: 10 + opened})  # one user: one a batch


async def order_writers(raffle: Raffle) -> Counter[tuple[int, str]]:
    """PostgreSQL: the orders written by each transaction, by (database, transaction id)."""
    writers: Counter[tuple[int, str]] = Counter()
    for database, engine in enumerate(raffle.engines[: len(raffle.settings.database_urls)]):
        async with engine.connect() as connection:
            for table in range(raffle.settings.shard_tables):
                name = shard_tables(table).raffle_order.name
                query = f"SELECT xmin::text, count(*) FROM {name} GROUP BY 1"
                for xmin, count in await connection.execute(text(query)):
                    writers[database, xmin] += count
    return writers


async def test_a_launch_many_users_first_visits_at_once_draw_in_batches(build: Build) -> None:
    raffle = await build(campaign(), None)
    users = [f"new{u:03d}" for u in range(600)]

    results, failures = await run(raffle, [Draw(u, 1) for u in users])

    assert failures == Counter()
    assert [r.draw_count for r in results] == [1] * len(users)
    assert [await account_of(raffle, u) for u in users] == [(20, 19)] * len(users)
    assert_batched(raffle)
    if raffle.settings.database_url.startswith("postgresql"):
        # Every order was written by a batch: none of the first visits left it to commit
        # alone, as each did before (600 transactions for 600 orders then).
        writers = await order_writers(raffle)
        assert writers.total() == len(users)
        assert len(writers) <= batches_of(raffle).sizes.total()


async def test_one_users_first_visits_in_two_processes_racing_their_account_and_a_rebate(
    build: Build,
) -> None:
    # 300 first draws of one user, half in each of two processes (each with its batches),
    # among 25 looks at the account (each opens it with the welcome pack, as a first visit
    # does) and 10 sign-ins (a rebate of 20 chances: the welcome pack first, then the
    # credit), all at once: the welcome pack given once, the rebate once, no chance spent
    # twice.
    raffle = await build(rebating(), None)
    async with another_process(raffle) as other:
        steps: list[Step] = []
        for n in range(150):
            steps += [drawing(raffle, "solo"), drawing(other, "solo")]
            either = (raffle, other)[n % 2]
            steps += [looking(either, "solo")] * (n % 6 == 0)
            steps += [signing_in(either, "solo")] * (n % 15 == 0)
        results = await at_once(steps)

    drawn = sorted(r.draw_count for r in results if isinstance(r, DrawResult))
    assert await account_of(raffle, "solo") == (20 + 20, 20 + 20 - len(drawn))
    assert drawn == list(range(1, len(drawn) + 1))
    assert len(drawn) >= 20  # the welcome pack's at least; the rebate's too if it was in time
    assert results.count("no_chances") == 300 - len(drawn)


async def test_many_users_first_visits_in_two_processes_racing_their_accounts_and_rebates(
    build: Build,
) -> None:
    # Each of 200 new users draws once in each of two processes, looks at the account and
    # signs in, all at once: the two draws' first visits race each other in two processes'
    # batches, and both race the account's opening and the rebate's.
    raffle = await build(rebating(), None)
    users = [f"new{u:03d}" for u in range(200)]
    async with another_process(raffle) as other:
        each = [
            (drawing(raffle, u), drawing(other, u), looking(raffle, u), signing_in(other, u))
            for u in users
        ]
        results = await at_once([step for steps in each for step in steps])

    draws = [
        [r for r in results[4 * n : 4 * n + 2] if isinstance(r, DrawResult)]
        for n in range(len(users))
    ]
    assert [sorted(r.draw_count for r in pair) for pair in draws] == [[1, 2]] * len(users)
    assert [await account_of(raffle, u) for u in users] == [(40, 38)] * len(users)


async def account_of(raffle: Raffle, user_id: str) -> tuple[int, int]:
    """The user's chances ever credited, and left in total."""
    async with raffle.shards.for_user(user_id) as uow:
        account = await uow.quotas.get(user_id, ACTIVITY, "2000-01-01", "2000-01")
    assert account is not None
    return account.total, account.total_left


@contextlib.asynccontextmanager
async def another_process(raffle: Raffle) -> AsyncIterator[Raffle]:
    """A second process's raffle on the same databases and Redis, with batches of its own;
    on SQLite (one process only: its stock is counted in-process) the same raffle."""
    if raffle.settings.redis_url is None:
        yield raffle
        return
    other = bootstrap(raffle.settings)
    try:
        await other.start()
        yield other
    finally:
        await other.close()


Step = Callable[[], Awaitable[object]]


async def at_once(steps: list[Step]) -> list[object]:
    """Every step at once, at most IN_FLIGHT at a time; "no_chances" for a refused draw."""
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(step: Step) -> object:
        async with gate:
            try:
                return await step()
            except NoChances:
                return "no_chances"

    return list(await asyncio.gather(*(one(step) for step in steps)))


def drawing(raffle: Raffle, user_id: str) -> Step:
    return lambda: draw(
        Draw(user_id, ACTIVITY), catalogue=raffle.catalogue, shards=raffle.shards,
        stock=raffle.stock, rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
    )  # fmt: skip


def looking(raffle: Raffle, user_id: str) -> Step:
    return lambda: my_account(
        user_id,
        ACTIVITY,
        catalogue=raffle.catalogue,
        shards=raffle.shards,
        clock=raffle.clock,
        hints=raffle.hints,
    )


def signing_in(raffle: Raffle, user_id: str) -> Step:
    return lambda: sign_in(
        user_id, ACTIVITY, catalogue=raffle.catalogue, config=raffle.uow, shards=raffle.shards,
        clock=raffle.clock, calendar=raffle.calendar, hints=raffle.hints,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("backend", "kind"),
    [("postgres", "redis"), ("mariadb", "redis"), ("postgres", "redis-cluster")],
)
async def test_redis_losing_its_data_halfway_neither_oversells_nor_drifts(
    request: pytest.FixtureRequest,
    make_database_url: Callable[[str], Awaitable[str]],
    backend: str,
    kind: str,
) -> None:
    # On the cluster every master is killed and restarted: each comes back with its slots
    # (nodes.conf) and without data, the counters of every strategy gone.
    redis_server: RedisServer | RedisClusterServer = request.getfixturevalue(
        f"{kind.replace('-', '_')}_server"
    )
    first, second = await make_database_url(backend), await make_database_url(backend)
    settings = Settings(
        database_url=first,
        shard_urls=second,
        shard_tables=4,
        **await redis_settings(request, kind),
    )
    raffle = await wired(settings, campaign(rate="0.5", stock=100))
    draws = [Draw(f"user{u:03d}", 1) for _ in range(20) for u in range(500)]
    done = 0
    halfway = asyncio.Event()
    first_pid, restarted = redis_server.pid, redis_server.pid

    async def one(cmd: Draw, gate: asyncio.Semaphore) -> DrawResult | str:
        nonlocal done
        async with gate:
            try:
                return await draw(
                    cmd, catalogue=raffle.catalogue, shards=raffle.shards,
                    stock=raffle.stock, rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
                )  # fmt: skip
            except Unavailable:
                return "unavailable"
            finally:
                done += 1
                if done == 3_000:
                    halfway.set()

    async def crash_halfway() -> None:
        await halfway.wait()
        redis_server.kill()  # no persistence: every counter is gone
        await asyncio.sleep(0.5)
        await asyncio.to_thread(redis_server.start)  # a cluster waits to be ok again
        nonlocal restarted
        restarted = redis_server.pid

    try:
        gate = asyncio.Semaphore(IN_FLIGHT)
        crasher = asyncio.create_task(crash_halfway())
        results = await asyncio.gather(*(one(d, gate) for d in draws))
        await crasher
        won = [r for r in results if isinstance(r, DrawResult)]
        [prize] = await stock_report(
            ACTIVITY,
            catalogue=raffle.catalogue,
            shards=raffle.shards,
            stock=raffle.stock,
            claims=raffle.claims,
        )
    finally:
        redis_server.start()
        await raffle.close()

    assert restarted != first_pid  # the outage was real: a new server, every counter gone
    assert len(won) + results.count("unavailable") == 10_000  # a refused draw spent nothing
    assert sum(r.award_id == PRIZE for r in won) == prize.wins <= 100
    assert prize.oversold == prize.unclaimed_wins == 0
    assert prize.drift == 0, prize
    assert_batched(raffle)
    commands = raffle.redis_commands
    assert commands is not None
    assert commands.commands > 2 * commands.round_trips  # the draws' Redis commands batched
