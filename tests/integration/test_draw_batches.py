"""Draws in batches on PostgreSQL and MariaDB: the rare cases, each answered through the
batches with several users' draws in them. A "plug" (a transaction holding a user's account row
lock, as a draw in flight does) keeps the first batch of a database waiting while the next one
fills up."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace

import pytest
from redis.asyncio import Redis
from sqlalchemy import text

from raffle.adapters.sql.shards import route
from raffle.adapters.sql.tables.shard import shard_tables
from raffle.bootstrap import Raffle
from raffle.domain.draws import OrderState, RaffleOrder, Win
from raffle.domain.quota import QuotaPack
from raffle.service.draw import Draw, DrawResult, draw
from raffle.service.idempotency import KeyReused
from raffle.service.ports import ShardUnitOfWork
from raffle.service.switches import set_switch
from raffle.settings import Settings
from tests.integration.raffles import ACTIVITY, PRIZE, STRATEGY, THANKS, campaign, wired
from tests.integration.test_draw_concurrency import batches_of, wins_in_database

STOCK = 1000
OTHER = 2  # a second activity


async def raffle_of(
    make_database_url: Callable[[str], Awaitable[str]],
    redis_url: str,
    batch_size: int,
    backend: str = "postgres",
) -> Raffle:
    """2 x 4 shards with Redis; every draw wins the stocked prize (stock taken)."""
    first, second = await make_database_url(backend), await make_database_url(backend)
    client = Redis.from_url(redis_url)
    await client.flushdb()
    await client.aclose()
    settings = Settings(
        database_url=first, shard_urls=second, shard_tables=4, redis_url=redis_url,
        draw_batch_size=batch_size,
    )  # fmt: skip
    loaded = campaign(rate="1", stock=STOCK)
    other = replace(loaded.activities[0], id=OTHER)  # the same strategy and welcome pack
    return await wired(settings, replace(loaded, activities=(*loaded.activities, other)))


@pytest.fixture(params=["postgres", "mariadb"])
async def raffle(
    request: pytest.FixtureRequest,
    make_database_url: Callable[[str], Awaitable[str]],
    redis_url: str,
) -> AsyncIterator[Raffle]:
    size = Settings().draw_batch_size
    raffle = await raffle_of(make_database_url, redis_url, size, request.param)
    yield raffle
    await raffle.close()


def on_postgres(raffle: Raffle) -> bool:
    return raffle.engines[0].dialect.name == "postgresql"


postgres_only = pytest.mark.parametrize("raffle", ["postgres"], indirect=True)


def users_of_lane_0(raffle: Raffle, count: int) -> list[str]:
    """Users whose rows are in the first database, over its shard tables."""
    users = (f"user{n:03d}" for n in range(1000))
    return [u for u in users if batches_of(raffle).lane(u) == 0][:count]


async def one(raffle: Raffle, cmd: Draw) -> DrawResult:
    return await draw(
        cmd, catalogue=raffle.catalogue, shards=raffle.shards,
        stock=raffle.stock, rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
    )  # fmt: skip


async def until(done: Callable[[], Awaitable[bool]]) -> None:
    async with asyncio.timeout(10):
        while not await done():  # noqa: ASYNC110 - the database has no event to wait on
            await asyncio.sleep(0.01)


async def hold(
    raffle: Raffle, user_id: str, key: str | None = None
) -> Callable[[], Awaitable[None]]:
    """A transaction that holds `user_id`'s account row lock, as a draw in flight does; with
    `key`, it records an order under that Idempotency-Key (a twin's draw). Returns what lets
    it go: rolled back, or with `key` committed."""
    activity = await raffle.catalogue.activity(ACTIVITY)
    now = raffle.clock.now()

    async def work(uow: ShardUnitOfWork) -> bool:
        account = await uow.quotas.consume(user_id, ACTIVITY, *activity.periods(now))
        assert account is not None
        if key is not None:
            order_id = f"twin{key}"
            await uow.orders.add(
                RaffleOrder(order_id, user_id, ACTIVITY, STRATEGY, account.draws,
                            OrderState.USED, now, key)
            )  # fmt: skip
            await uow.wins.add(Win(order_id, user_id, ACTIVITY, STRATEGY, THANKS, None, "x", now))
        return key is not None

    return await in_flight(raffle, user_id, work)


async def in_flight(
    raffle: Raffle, user_id: str, work: Callable[[ShardUnitOfWork], Awaitable[bool]]
) -> Callable[[], Awaitable[None]]:
    """`work` in a transaction on `user_id`'s shard, kept open (its locks held) until let go;
    committed then if `work` answered True, else rolled back. Returns what lets it go."""
    held, release = asyncio.Event(), asyncio.Event()

    async def run() -> None:
        async with raffle.shards.for_user(user_id) as uow:
            commit = await work(uow)
            held.set()
            await release.wait()
            if commit:
                await uow.commit()

    task = asyncio.create_task(run())
    await held.wait()

    async def let_go() -> None:
        release.set()
        await task

    return let_go


async def batched_behind_a_plug(
    raffle: Raffle,
    plug: str,
    draws: list[Draw],
    meanwhile: Callable[[], Awaitable[None]] | None = None,
) -> tuple[list[DrawResult], Counter[int]]:
    """`draws` at once, gathered in one batch while the plug's draw waits in the one before;
    `meanwhile` runs once that batch's first statement is under way. Also the batches begun
    meanwhile, by size."""
    before = batches_of(raffle).sizes.copy()
    begun = before.total()
    let_go = await hold(raffle, plug)
    plugged = asyncio.create_task(one(raffle, Draw(plug, ACTIVITY)))

    async def begun_since(n: int) -> bool:
        return batches_of(raffle).sizes.total() == begun + n

    await until(lambda: begun_since(1))
    tasks = [asyncio.create_task(one(raffle, cmd)) for cmd in draws]
    await asyncio.sleep(0.3)  # every draw reaches the lane, behind the plug's batch
    await let_go()
    await plugged
    if meanwhile is not None:
        await until(lambda: begun_since(2))
        await meanwhile()
    results = list(await asyncio.gather(*tasks))
    return results, batches_of(raffle).sizes - before


async def opened(raffle: Raffle, users: list[str]) -> None:
    """A first draw each: their accounts opened with the welcome pack (20 chances)."""
    await asyncio.gather(*(one(raffle, Draw(u, ACTIVITY)) for u in users))


async def chances_left(raffle: Raffle, user_id: str) -> int:
    activity = await raffle.catalogue.activity(ACTIVITY)
    async with raffle.shards.for_user(user_id) as uow:
        account = await uow.quotas.get(user_id, ACTIVITY, *activity.periods(raffle.clock.now()))
    assert account is not None
    return account.chances


async def total(raffle: Raffle, user_id: str) -> int:
    """Every chance ever credited to the user."""
    async with raffle.shards.for_user(user_id) as uow:
        account = await uow.quotas.get(user_id, ACTIVITY, "2000-01-01", "2000-01")
    assert account is not None
    return account.total


async def lock_waits(raffle: Raffle) -> bool:
    """Whether a transaction on the first database waits for a lock (MariaDB: whether a
    statement on its server has run for 0.1 s, which only one waiting does here:
    information_schema.innodb_trx did not always list the batch waiting)."""
    waits = (
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE wait_event_type = 'Lock' AND datname = current_database()"
        if on_postgres(raffle)
        else "SELECT count(*) FROM information_schema.processlist "
        "WHERE command = 'Query' AND time_ms > 100 AND id != connection_id()"
    )
    async with raffle.engines[0].connect() as connection:
        return bool(await connection.scalar(text(waits)))


async def test_a_replay_is_answered_in_its_batch_and_spends_nothing(raffle: Raffle) -> None:
    plug, keen, *others = users_of_lane_0(raffle, 8)
    await opened(raffle, [plug, keen, *others])
    first = await one(raffle, Draw(keen, ACTIVITY, "again"))

    draws = [Draw(keen, ACTIVITY, "again"), *(Draw(u, ACTIVITY) for u in others)]
    (replay, *fresh), sizes = await batched_behind_a_plug(raffle, plug, draws)

    # The plug's, and one that held them all and answered them all (the replay too).
    assert sizes == Counter({1: 1, len(draws): 1})
    assert batches_of(raffle).failed == 0
    assert (replay.order_id, replay.draw_count, replay.replayed) == (first.order_id, 2, True)
    assert [(r.draw_count, r.replayed) for r in fresh] == [(2, False)] * len(others)
    assert await chances_left(raffle, keen) == 18  # the total, the day and the month given back
    assert [await chances_left(raffle, u) for u in others] == [18] * len(others)


async def test_a_key_used_in_another_activity_is_refused_in_its_batch(raffle: Raffle) -> None:
    users = users_of_lane_0(raffle, 4)
    await opened(raffle, users)
    await one(raffle, Draw(users[0], ACTIVITY, "mine"))
    begun = batches_of(raffle).sizes.total()

    with pytest.raises(KeyReused):
        await one(raffle, Draw(users[0], OTHER, "mine"))

    assert batches_of(raffle).sizes.total() == begun + 1  # answered by its batch
    assert batches_of(raffle).failed == 0
    assert await chances_left(raffle, users[0]) == 18


async def writers(raffle: Raffle, users: list[str], results: list[DrawResult]) -> set[str]:
    """The transactions that wrote these draws (`users[i]` drew `results[i]`) and last wrote
    their users' accounts (`xmin`: the id of the transaction that wrote a row's version)."""
    found: set[str] = set()
    async with raffle.engines[0].connect() as connection:
        for user, result in zip(users, results, strict=True):
            tables = shard_tables(route(user, 2, 4)[1])
            for query, params in (
                (f"SELECT xmin::text FROM {tables.raffle_order.name} WHERE order_id = :o",
                 {"o": result.order_id}),
                (f"SELECT xmin::text FROM {tables.quota_account.name} WHERE user_id = :u",
                 {"u": user}),
            ):  # fmt: skip
                found.add((await connection.execute(text(query), params)).scalar_one())
    return found


async def test_first_visits_draw_in_the_batch_with_the_welcome_pack(raffle: Raffle) -> None:
    plug, *users = users_of_lane_0(raffle, 9)
    known, new = users[:4], users[4:]
    await opened(raffle, [plug, *known])

    results, sizes = await batched_behind_a_plug(raffle, plug, [Draw(u, ACTIVITY) for u in users])

    assert sizes == Counter({1: 1, len(users): 1})
    assert [r.draw_count for r in results] == [2] * len(known) + [1] * len(new)
    assert [await chances_left(raffle, u) for u in users] == [18] * len(known) + [19] * len(new)
    if on_postgres(raffle):  # One transaction: the batch's. (Alone, each committed its own.)
        assert len(await writers(raffle, users, results)) == 1


async def opening(
    raffle: Raffle, user_id: str, credit: QuotaPack | None
) -> Callable[[], Awaitable[None]]:
    """A transaction that opens `user_id`'s account with the welcome pack, as `my_account`
    does, and with `credit` credits that pack too, as a rebate does (welcome_first, then the
    credit); it commits when let go."""
    activity = await raffle.catalogue.activity(ACTIVITY)
    welcome = await raffle.catalogue.welcome(activity)
    now = raffle.clock.now()

    async def work(uow: ShardUnitOfWork) -> bool:
        assert await uow.quotas.open(user_id, ACTIVITY, welcome)
        if credit is not None:
            await uow.quotas.credit(user_id, ACTIVITY, credit, *activity.periods(now))
        return True

    return await in_flight(raffle, user_id, work)


@pytest.mark.parametrize("credit", [None, QuotaPack(99, 5, 5, 5)], ids=["my-account", "rebate"])
async def test_a_first_visit_whose_account_opens_meanwhile_goes_again_and_draws_from_it(
    raffle: Raffle, credit: QuotaPack | None
) -> None:
    # The batch finds no account for `late`, whose account another transaction has opened
    # but not committed: the batch's opening waits for it, finds it made, leaves it as it is
    # (the welcome pack given once, the credit kept), and `late` goes again, in a batch of
    # its own, which draws from it. On MariaDB the batch's locking read of the accounts waits
    # for it, and `late` draws from it in the batch.
    plug, late, *new = users_of_lane_0(raffle, 6)
    await opened(raffle, [plug])
    let_opener_go = await opening(raffle, late, credit)

    async def opener_commits_while_the_batch_waits() -> None:
        await until(lambda: lock_waits(raffle))
        await let_opener_go()

    draws = [Draw(u, ACTIVITY) for u in [late, *new]]
    (alone, *batched), sizes = await batched_behind_a_plug(
        raffle, plug, draws, opener_commits_while_the_batch_waits
    )

    # The plug's, then on PostgreSQL `late` again.
    assert sizes == Counter({1: 2 if on_postgres(raffle) else 1, len(draws): 1})
    assert batches_of(raffle).failed == 0
    assert [r.draw_count for r in [alone, *batched]] == [1] * len(draws)
    credited = 5 if credit else 0
    assert await chances_left(raffle, late) == 19 + credited
    assert await total(raffle, late) == 20 + credited
    assert [await chances_left(raffle, u) for u in new] == [19] * len(new)
    if on_postgres(raffle):
        assert len(await writers(raffle, new, batched)) == 1
        assert len(await writers(raffle, [late, *new], [alone, *batched])) == 2


async def test_two_draws_of_one_user_in_flight_take_turns_over_two_batches(
    raffle: Raffle,
) -> None:
    plug, twice, *others = users_of_lane_0(raffle, 6)
    await opened(raffle, [plug, twice, *others])
    draws = [Draw(twice, ACTIVITY), Draw(twice, ACTIVITY), *(Draw(u, ACTIVITY) for u in others)]

    results, sizes = await batched_behind_a_plug(raffle, plug, draws)

    assert sizes == Counter({1: 2, 1 + len(others): 1})  # the second waited for the next batch
    assert sorted(r.draw_count for r in results[:2]) == [2, 3]
    assert [r.draw_count for r in results[2:]] == [2] * len(others)
    assert await chances_left(raffle, twice) == 17


async def test_a_batch_that_fails_runs_its_draws_again_one_per_batch_its_stock_given_back(
    raffle: Raffle,
) -> None:
    # A twin's draw commits its Idempotency-Key while the batch waits for that user's lock,
    # after the snapshot of the batch's replay lookup: recording the batch breaks the key's
    # unique index, the whole batch rolls back, and each draw goes again in a batch of its
    # own: the twin's finds the key and replays it. (MariaDB's locking read sees the twin's
    # order once it has waited: a replay, and nothing fails.)
    plug, twin, *others = users_of_lane_0(raffle, 8)
    await opened(raffle, [plug, twin, *others])
    let_twin_go: Callable[[], Awaitable[None]] | None = None

    async def twin_commits_while_the_batch_waits() -> None:
        await until(lambda: lock_waits(raffle))
        assert let_twin_go is not None
        await let_twin_go()

    let_twin_go = await hold(raffle, twin, key="same")
    draws = [Draw(twin, ACTIVITY, "same"), *(Draw(u, ACTIVITY) for u in others)]
    (replay, *fresh), sizes = await batched_behind_a_plug(
        raffle, plug, draws, twin_commits_while_the_batch_waits
    )

    if on_postgres(raffle):
        assert sizes == Counter({1: 1 + len(draws), len(draws): 1})
        assert batches_of(raffle).failed == 1
    else:
        assert sizes == Counter({1: 1, len(draws): 1})
        assert batches_of(raffle).failed == 0
    assert (replay.order_id, replay.replayed) == ("twinsame", True)
    assert [(r.draw_count, r.replayed) for r in fresh] == [(2, False)] * len(others)
    assert [await chances_left(raffle, u) for u in others] == [18] * len(others)
    assert await chances_left(raffle, twin) == 18  # its first draw, and the twin's
    # Every draw won the prize; the units the failed batch took were given back.
    wins = await wins_in_database(raffle)
    assert wins == len([plug, twin, *others]) + 1 + len(others)  # opening, plug, batch
    assert await raffle.stock.left(STRATEGY, PRIZE) == STOCK - wins


# The lanes' own connections (postgres/lane.py) sit idle between batches after a COMMIT (or a
# ROLLBACK) sent as such; SQLAlchemy's adapter sends "COMMIT;".
_LANE_CONNECTIONS = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    "AND state = 'idle' AND query IN ('COMMIT', 'ROLLBACK')"
)


async def lane_connections(raffle: Raffle) -> list[int]:
    async with raffle.engines[0].connect() as connection:
        return list((await connection.execute(text(_LANE_CONNECTIONS))).scalars())


@postgres_only
async def test_draws_go_on_after_the_lanes_connection_was_lost(raffle: Raffle) -> None:
    users = users_of_lane_0(raffle, 6)
    await opened(raffle, users)
    (lost,) = await lane_connections(raffle)  # one batch in flight at a time: one connection
    async with raffle.engines[0].connect() as connection:
        await connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": lost})

    # Lost (found closed, or failing its BEGIN: the draws then go again, one per batch),
    # and replaced.
    results = await asyncio.gather(*(one(raffle, Draw(u, ACTIVITY)) for u in users))

    assert [r.draw_count for r in results] == [2] * len(users)
    assert [await chances_left(raffle, u) for u in users] == [18] * len(users)
    await opened(raffle, users)
    assert len(fresh := await lane_connections(raffle)) == 1
    assert fresh != [lost]


@postgres_only
async def test_closing_the_raffle_closes_the_lanes_connections(raffle: Raffle) -> None:
    await opened(raffle, users_of_lane_0(raffle, 3))
    assert len(await lane_connections(raffle)) == 1

    await batches_of(raffle).close()

    async def gone() -> bool:
        return not await lane_connections(raffle)

    await until(gone)


async def test_a_batch_size_of_one_draws_each_in_a_batch_of_its_own(
    make_database_url: Callable[[str], Awaitable[str]], redis_url: str
) -> None:
    raffle = await raffle_of(make_database_url, redis_url, 1)
    try:
        users = users_of_lane_0(raffle, 6)
        await opened(raffle, users)
        key = await one(raffle, Draw(users[0], ACTIVITY, "once"))

        results = await asyncio.gather(
            one(raffle, Draw(users[0], ACTIVITY, "once")),
            *(one(raffle, Draw(u, ACTIVITY)) for u in users[1:]),
        )

        assert batches_of(raffle).sizes == Counter({1: 2 * len(users) + 1})
        assert (results[0].order_id, results[0].replayed) == (key.order_id, True)
        assert [r.draw_count for r in results[1:]] == [2] * (len(users) - 1)
        assert [await chances_left(raffle, u) for u in users] == [18] * len(users)
    finally:
        await raffle.close()


async def test_a_batch_size_switched_at_runtime_caps_the_next_batches(raffle: Raffle) -> None:
    users = users_of_lane_0(raffle, 7)
    await opened(raffle, users)  # the lane's batches are under way at the setting's size
    switched = await set_switch(
        "draw_batch_size", "2", actor="root", board=raffle.switches, uow=raffle.uow,
        clock=raffle.clock,
    )  # fmt: skip
    assert switched.value == "2"
    results, sizes = await batched_behind_a_plug(
        raffle, users[0], [Draw(u, ACTIVITY) for u in users[1:]]
    )
    assert sizes == Counter({1: 1, 2: 3})  # the plug's batch, then six draws two by two
    assert [r.draw_count for r in results] == [2] * 6
