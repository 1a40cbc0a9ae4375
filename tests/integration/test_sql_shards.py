"""The user dimension in SQL: routing, quota accounts, top-ups, orders, wins, outbox, shards."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Table, make_url, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import QueuePool

from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.shards import route
from raffle.adapters.sql.tables.shard import ShardTables, shard_tables
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.bootstrap import sql_shards
from raffle.domain.draws import OrderState, OutboxMessage, RaffleOrder, Win, WinState
from raffle.domain.quota import QuotaAccount, QuotaPack, TopUpOrder
from raffle.service.ports import Shards, ShardUnitOfWork
from tests.conftest import MakeDatabaseUrl
from tests.integration.conftest import SHARD_TABLES

USER, OTHER = "xiaofuge", "liergou"
ACTIVITY, STRATEGY = 100301, 100006
DAY, NEXT_DAY, MONTH, NEXT_MONTH = "2026-11-21", "2026-11-22", "2026-11", "2026-12"
PACK = QuotaPack(1, total=10, day=3, month=5)
T0 = datetime(2026, 11, 21, 8, 30, 0, 123456, tzinfo=UTC)


def _tables(user_id: str) -> ShardTables:
    return shard_tables(route(user_id, 1, SHARD_TABLES)[1])


async def _rows(engine: AsyncEngine, *tables: Table) -> list[list[tuple[Any, ...]]]:
    async with engine.connect() as connection:
        return [
            [tuple(row) for row in await connection.execute(select(t).order_by(*t.primary_key))]
            for t in tables
        ]


async def _open(shards: Shards, user_id: str, pack: QuotaPack | None = PACK) -> None:
    async with shards.for_user(user_id) as uow:
        assert await uow.quotas.open(user_id, ACTIVITY, pack)
        await uow.commit()


async def _consume(shards: Shards, user_id: str, day: str = DAY, month: str = MONTH) -> bool:
    async with shards.for_user(user_id) as uow:
        account = await uow.quotas.consume(user_id, ACTIVITY, day, month)
        if account is None:
            return False
        await uow.commit()
        return True


async def _get(
    shards: Shards, user_id: str, day: str = DAY, month: str = MONTH
) -> QuotaAccount | None:
    async with shards.for_user(user_id) as uow:
        return await uow.quotas.get(user_id, ACTIVITY, day, month)


def _order(user_id: str, n: int, activity_id: int = ACTIVITY) -> RaffleOrder:
    at = T0 + timedelta(seconds=n)
    order_id = f"{int(at.timestamp() * 1000):012x}{random.getrandbits(48):012x}"
    return RaffleOrder(order_id, user_id, activity_id, STRATEGY, n, OrderState.USED, at, f"key-{n}")


def _win(order: RaffleOrder, award_id: int = 101, points: int | None = None) -> Win:
    return Win(
        order.order_id,
        order.user_id,
        order.activity_id,
        order.strategy_id,
        award_id,
        points,
        "luck" if points else "weight",
        order.created_at,
    )


# --- routing -----------------------------------------------------------------------


def test_route_is_the_same_in_every_process() -> None:
    # CRC-32 values computed once; Python's salted hash() would change them per process.
    assert route("xiaofuge", 2, 4) == (0, 2)
    assert route("user001", 2, 4) == (1, 2)
    assert route("liergou", 2, 4) == (0, 1)
    assert route("用户42", 2, 4) == (1, 0)
    assert route("xiaofuge", 1, 1) == (0, 0)
    with pytest.raises(ValueError, match="at least one"):
        route("xiaofuge", 0, 4)


def test_route_spreads_users_evenly_over_two_databases_by_four_tables() -> None:
    rng = random.Random(2026)
    users = [
        *(f"{rng.getrandbits(64):x}" for _ in range(5000)),
        *(f"1{rng.randrange(10**10):010d}" for _ in range(5000)),  # phone numbers
    ]

    shares = Counter(route(user, 2, 4) for user in users)

    assert set(shares) == {(d, t) for d in range(2) for t in range(4)}
    assert all(0.08 <= count / len(users) <= 0.17 for count in shares.values()), shares


# --- quota accounts ----------------------------------------------------------------


async def test_open_creates_the_account_once(shards: Shards) -> None:
    async with shards.for_user(USER) as uow:
        assert await uow.quotas.get(USER, ACTIVITY, DAY, MONTH) is None
        assert await uow.quotas.open(USER, ACTIVITY, PACK)
        assert not await uow.quotas.open(USER, ACTIVITY, QuotaPack(2, 100, 100, 100))
        await uow.commit()
    await _open(shards, OTHER, None)

    assert await _get(shards, USER) == QuotaAccount(USER, ACTIVITY, 10, 10, 3, 3, 5, 5)
    assert await _get(shards, OTHER) == QuotaAccount(OTHER, ACTIVITY, 0, 0, 0, 0, 0, 0)


async def test_consume_takes_from_the_total_the_day_and_the_month(
    shards: Shards, engine: AsyncEngine
) -> None:
    await _open(shards, USER)
    assert await _consume(shards, USER)

    async with shards.for_user(USER) as uow:
        after = await uow.quotas.consume(USER, ACTIVITY, DAY, MONTH)
        await uow.commit()

    assert after == QuotaAccount(USER, ACTIVITY, 10, 8, 3, 1, 5, 3)
    assert after.draws == 2
    t = _tables(USER)
    assert await _rows(engine, t.quota_day, t.quota_month) == [
        [(USER, ACTIVITY, DAY, 1)],
        [(USER, ACTIVITY, MONTH, 3)],
    ]
    # A new day starts at the allowance, the month runs on.
    assert await _get(shards, USER, NEXT_DAY) == QuotaAccount(USER, ACTIVITY, 10, 8, 3, 3, 5, 3)
    assert await _consume(shards, USER, NEXT_DAY)
    assert await _get(shards, USER, NEXT_DAY) == QuotaAccount(USER, ACTIVITY, 10, 7, 3, 2, 5, 2)
    assert await _get(shards, USER) == QuotaAccount(USER, ACTIVITY, 10, 7, 3, 1, 5, 2)


async def test_credit_adds_to_the_account_and_to_the_running_day_and_month(
    shards: Shards,
) -> None:
    await _open(shards, USER)
    assert await _consume(shards, USER)
    more = QuotaPack(2, total=4, day=2, month=1)

    async with shards.for_user(USER) as uow:
        await uow.quotas.credit(USER, ACTIVITY, more, DAY, MONTH)
        await uow.quotas.credit(OTHER, ACTIVITY, more, DAY, MONTH)  # no account yet
        await uow.commit()

    assert await _get(shards, USER) == QuotaAccount(USER, ACTIVITY, 14, 13, 5, 4, 6, 5)
    assert await _get(shards, USER, NEXT_DAY, NEXT_MONTH) == QuotaAccount(
        USER, ACTIVITY, 14, 13, 5, 5, 6, 6
    )
    async with shards.for_user(USER) as uow:  # OTHER's account, on USER's shard table
        assert await uow.quotas.get(OTHER, ACTIVITY, DAY, MONTH) == QuotaAccount(
            OTHER, ACTIVITY, 4, 4, 2, 2, 1, 1
        )


async def test_credit_many_equals_crediting_each(shards: Shards, engine: AsyncEngine) -> None:
    """Bulk: two packs for one user sum, an account missing is made, days and months not
    started yet stay unstarted; the same rows as `credit` called for each."""
    await _open(shards, USER)
    assert await _consume(shards, USER)
    more, less = QuotaPack(2, total=4, day=2, month=1), QuotaPack(3, total=1, day=0, month=0)

    async with shards.for_user(USER) as uow:
        await uow.quotas.credit_many(
            [
                (USER, ACTIVITY, more, DAY, MONTH),
                (OTHER, ACTIVITY, more, DAY, MONTH),  # no account yet
                (USER, ACTIVITY, less, DAY, MONTH),
                (USER, ACTIVITY, more, DAY, MONTH),
            ]
        )
        await uow.commit()

    assert await _get(shards, USER) == QuotaAccount(USER, ACTIVITY, 19, 18, 7, 6, 7, 6)
    assert await _get(shards, USER, NEXT_DAY, NEXT_MONTH) == QuotaAccount(
        USER, ACTIVITY, 19, 18, 7, 7, 7, 7
    )
    async with shards.for_user(USER) as uow:
        assert await uow.quotas.get(OTHER, ACTIVITY, DAY, MONTH) == QuotaAccount(
            OTHER, ACTIVITY, 4, 4, 2, 2, 1, 1
        )
        await uow.quotas.credit_many([])  # nothing to do, nothing done
    t = _tables(USER)
    day_rows, month_rows = await _rows(engine, t.quota_day, t.quota_month)
    assert [row[0] for row in day_rows + month_rows] == [USER, USER]


@pytest.mark.parametrize(
    ("limit", "pack"),
    [
        ("total", QuotaPack(1, total=2, day=5, month=5)),
        ("day", QuotaPack(1, total=9, day=2, month=5)),
        ("month", QuotaPack(1, total=9, day=5, month=2)),
    ],
)
async def test_consume_stops_at_each_limit_and_changes_nothing(
    shards: Shards, engine: AsyncEngine, limit: str, pack: QuotaPack
) -> None:
    await _open(shards, USER, pack)
    for _ in range(2):  # each pack's tightest limit
        assert await _consume(shards, USER)
    t = _tables(USER)
    before = await _rows(engine, t.quota_account, t.quota_day, t.quota_month)
    seen = await _get(shards, USER), await _get(shards, USER, NEXT_DAY)
    assert seen[0] is not None
    assert seen[0].chances == 0, limit

    async with shards.for_user(USER) as uow:
        assert await uow.quotas.consume(USER, ACTIVITY, DAY, MONTH) is None
        if limit != "day":  # on a new day only the day's limit is lifted
            assert await uow.quotas.consume(USER, ACTIVITY, NEXT_DAY, MONTH) is None
        await uow.commit()  # what was taken before the refusal was given back

    assert await _get(shards, USER) == seen[0]
    assert await _get(shards, USER, NEXT_DAY) == seen[1]
    # The one trace: a refused draw on a new day may have started that day's row.
    started = [(USER, ACTIVITY, NEXT_DAY, pack.day)] if limit == "month" else []
    after = await _rows(engine, t.quota_account, t.quota_day, t.quota_month)
    assert after == [before[0], before[1] + started, before[2]]


async def test_consume_without_an_account_is_refused(shards: Shards) -> None:
    async with shards.for_user(USER) as uow:
        assert await uow.quotas.consume(USER, ACTIVITY, DAY, MONTH) is None
        assert await uow.quotas.get(USER, ACTIVITY, DAY, MONTH) is None


# --- top-ups, orders, wins, outbox -------------------------------------------------


async def test_top_ups_added_together_are_recorded_once_per_out_business_no(
    shards: Shards, engine: AsyncEngine
) -> None:
    def order(order_id: str, user_id: str, out_business_no: str) -> TopUpOrder:
        return TopUpOrder(order_id, user_id, ACTIVITY, 9011, out_business_no, PACK, T0)

    async with shards.for_user(USER) as uow:
        assert await uow.top_ups.add(**_top_up("t0", USER, "pay-0"))
        added = await uow.top_ups.add_many(
            [
                order("t1", USER, "pay-0"),  # used before
                order("t2", USER, "pay-1"),
                order("t3", USER, "pay-1"),  # used earlier in the same call
                order("t4", OTHER, "pay-1"),  # another user's number
                order("t5", OTHER, "pay-0"),
            ]
        )
        assert added == {"t2", "t4", "t5"}
        assert await uow.top_ups.add_many([order("t6", USER, "pay-1")]) == set()
        await uow.commit()

    table = _tables(USER).top_up_order
    assert sorted(row[:5] for row in (await _rows(engine, table))[0]) == [
        ("t0", USER, ACTIVITY, 9011, "pay-0"),
        ("t2", USER, ACTIVITY, 9011, "pay-1"),
        ("t4", OTHER, ACTIVITY, 9011, "pay-1"),
        ("t5", OTHER, ACTIVITY, 9011, "pay-0"),
    ]


def _top_up(order_id: str, user_id: str, out_business_no: str) -> dict[str, Any]:
    return {
        "order_id": order_id,
        "user_id": user_id,
        "activity_id": ACTIVITY,
        "sku": 9011,
        "out_business_no": out_business_no,
        "pack": PACK,
        "at": T0,
    }


async def test_a_top_up_is_recorded_once_per_out_business_no(
    shards: Shards, engine: AsyncEngine
) -> None:
    def top_up(order_id: str, user_id: str, out_business_no: str) -> dict[str, Any]:
        return {
            "order_id": order_id,
            "user_id": user_id,
            "activity_id": ACTIVITY,
            "sku": 9011,
            "out_business_no": out_business_no,
            "pack": PACK,
            "at": T0,
        }

    async with shards.for_user(USER) as uow:
        assert await uow.top_ups.add(**top_up("t1", USER, "pay-1"))
        assert not await uow.top_ups.add(**top_up("t2", USER, "pay-1"))
        assert await uow.top_ups.add(**top_up("t3", OTHER, "pay-1"))  # another user's number
        assert await uow.top_ups.exists(USER, "pay-1")  # the transaction is still usable
        await uow.commit()

    async with shards.for_user(USER) as uow:
        assert await uow.top_ups.exists(USER, "pay-1")
        assert not await uow.top_ups.exists(USER, "pay-2")
    table = _tables(USER).top_up_order
    assert [row[:5] for row in (await _rows(engine, table))[0]] == [
        ("t1", USER, ACTIVITY, 9011, "pay-1"),
        ("t3", OTHER, ACTIVITY, 9011, "pay-1"),
    ]


async def test_history_pages_newest_first_without_gaps_or_repeats(shards: Shards) -> None:
    mine = [_order(USER, n) for n in range(25)]
    noise = [_order(USER, 30, activity_id=ACTIVITY + 1), _order(OTHER, 31)]
    async with shards.for_user(USER) as uow:
        for order in random.sample([*mine, *noise], len(mine) + len(noise)):
            await uow.orders.add(order)
            await uow.wins.add(_win(order, points=order.draw_count or None))
        await uow.commit()

    pages: list[list[tuple[RaffleOrder, Win]]] = []
    before = None
    async with shards.for_user(USER) as uow:
        while page := list(await uow.orders.history(USER, ACTIVITY, before, 10)):
            pages.append(page)
            before = page[-1][0].order_id

    assert [len(page) for page in pages] == [10, 10, 5]
    newest_first = sorted(mine, key=lambda order: order.created_at, reverse=True)
    assert [order for page in pages for order, _ in page] == newest_first
    assert all(
        win == _win(order, points=order.draw_count or None) for page in pages for order, win in page
    )


async def test_an_order_is_found_by_its_request_key(shards: Shards) -> None:
    order = _order(USER, 7)
    async with shards.for_user(USER) as uow:
        await uow.orders.add(order)
        await uow.orders.add(
            RaffleOrder("a" * 24, USER, ACTIVITY, STRATEGY, 8, OrderState.USED, T0)
        )
        await uow.orders.add(
            RaffleOrder("b" * 24, USER, ACTIVITY, STRATEGY, 9, OrderState.USED, T0)
        )
        await uow.commit()

    async with shards.for_user(USER) as uow:
        assert await uow.orders.by_request(USER, "key-7") == order
        assert await uow.orders.by_request(USER, "key-8") is None
        assert await uow.orders.by_request(OTHER, "key-7") is None


async def test_rows_added_are_seen_by_the_next_statements_of_the_transaction(
    shards: Shards,
) -> None:
    # PostgreSQL holds INSERTs back to send them together: they must go first.
    order = _order(USER, 7)
    async with shards.for_user(USER) as uow:
        await uow.orders.add(order)
        assert await uow.orders.by_request(USER, "key-7") == order
        await uow.wins.add(_win(order, 101))
        assert await uow.wins.count(STRATEGY, 101) == 1
        later = _order(USER, 8)
        await uow.orders.add(later)
        await uow.wins.add(_win(later, 101))
        history = await uow.orders.history(USER, ACTIVITY, None, 10)
        assert [o for o, _ in history] == [later, order]


async def test_wins_round_trip_and_are_counted_per_prize(shards: Shards) -> None:
    orders = [_order(USER, n) for n in range(6)]
    wins = [
        _win(orders[0], 101),
        _win(orders[1], 101, points=50),
        replace(_win(orders[2], 101), state=WinState.COMPLETED),
        _win(orders[3], 102),
        _win(orders[4], 102),
        replace(_win(orders[5], 101), strategy_id=STRATEGY + 1),
    ]
    async with shards.for_user(USER) as uow:
        for win in wins:
            await uow.wins.add(win)
        await uow.commit()

    async with shards.for_user(USER) as uow:
        assert [await uow.wins.get(win.order_id) for win in wins] == wins
        assert await uow.wins.get("missing") is None
        assert await uow.wins.count(STRATEGY, 101) == 3
        assert await uow.wins.count(STRATEGY, 102) == 2
        assert await uow.wins.count(STRATEGY + 1, 101) == 1
        assert await uow.wins.count(STRATEGY, 103) == 0


async def test_an_outbox_message_is_written_ready_to_relay(
    shards: Shards, engine: AsyncEngine
) -> None:
    message = OutboxMessage("f" * 32, "award.won", "order-1", '{"award_id": 101}', T0)
    async with shards.for_user(USER) as uow:
        await uow.outbox.add(message)
        await uow.commit()

    assert await _rows(engine, _tables(USER).outbox) == [
        [("f" * 32, "award.won", "order-1", '{"award_id": 101}', "create", 0, T0, T0)]
    ]


async def _draw_then_fail(shards: Shards) -> None:
    async with shards.for_user(USER) as uow:
        assert await uow.quotas.consume(USER, ACTIVITY, DAY, MONTH) is not None
        await uow.orders.add(_order(USER, 1))
        raise RuntimeError("boom")


async def test_leaving_without_commit_keeps_nothing(shards: Shards, engine: AsyncEngine) -> None:
    await _open(shards, USER)
    with pytest.raises(RuntimeError, match="boom"):
        await _draw_then_fail(shards)

    assert await _get(shards, USER) == QuotaAccount(USER, ACTIVITY, 10, 10, 3, 3, 5, 5)
    assert await _rows(engine, _tables(USER).raffle_order) == [[]]
    pool = engine.sync_engine.pool
    assert isinstance(pool, QueuePool)
    assert pool.checkedout() == 0


# --- concurrency ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limit", "pack"),
    [
        ("total", QuotaPack(1, total=3, day=1000, month=1000)),
        ("day", QuotaPack(1, total=1000, day=3, month=1000)),
        ("month", QuotaPack(1, total=1000, day=1000, month=3)),
    ],
)
async def test_concurrent_draws_of_one_user_never_overspend(
    shards: Shards, database_url: str, limit: str, pack: QuotaPack
) -> None:
    await _open(shards, USER, pack)
    # SQLite serialises every writer: fewer in flight keep it within the busy timeout.
    in_flight = 50 if make_url(database_url).get_backend_name() == "sqlite" else 200

    results = await asyncio.gather(*(_consume(shards, USER) for _ in range(in_flight)))

    assert results.count(True) == 3, limit
    account = await _get(shards, USER)
    assert account is not None
    assert (account.total_left, account.day_left, account.month_left) == (
        pack.total - 3,
        pack.day - 3,
        pack.month - 3,
    )


async def _first_draw(shards: Shards, user_id: str) -> bool:
    async with shards.for_user(user_id) as uow:
        if await uow.quotas.consume(user_id, ACTIVITY, DAY, MONTH) is not None:
            return False  # not a first draw
        assert await uow.quotas.open(user_id, ACTIVITY, PACK)
        account = await uow.quotas.consume(user_id, ACTIVITY, DAY, MONTH)
        await uow.commit()
        return account is not None


async def test_first_draws_of_many_new_users_at_once_all_succeed(shards: Shards) -> None:
    # On MariaDB this needs READ COMMITTED (see create_engine): under REPEATABLE READ the
    # refused update of a missing account takes a gap lock and the inserts that follow deadlock.
    users = [f"new{n:03d}" for n in range(100)]

    results = await asyncio.gather(*(_first_draw(shards, user) for user in users))

    assert results == [True] * len(users)


# --- databases × tables --------------------------------------------------------------


@pytest.mark.parametrize("backend", ["postgres", "mariadb", "sqlite"])
async def test_each_user_lives_in_the_one_table_its_route_names(
    backend: str, make_database_url: MakeDatabaseUrl
) -> None:
    urls = [await make_database_url(backend) for _ in range(2)]
    for url in urls:
        await upgrade(url, shard_tables=SHARD_TABLES)
    engines = [create_engine(url) for url in urls]
    try:
        shards: Shards = sql_shards(engines, SHARD_TABLES)
        users = [f"user{n:04d}" for n in range(200)]
        for n, user in enumerate(users):
            async with shards.for_user(user) as uow:
                assert await uow.quotas.open(user, ACTIVITY, PACK)
                await uow.wins.add(_win(_order(user, n)))
                await uow.commit()

        found: dict[str, list[tuple[int, int]]] = {}
        for database, engine in enumerate(engines):
            for table in range(SHARD_TABLES):
                account = shard_tables(table).quota_account
                async with engine.connect() as connection:
                    for user in (await connection.execute(select(account.c.user_id))).scalars():
                        found.setdefault(user, []).append((database, table))
        assert found == {user: [route(user, 2, SHARD_TABLES)] for user in users}

        units = shards.every()
        counts = []
        for uow in units:
            async with uow:
                counts.append(await uow.wins.count(STRATEGY, 101))
        expected = Counter(route(user, 2, SHARD_TABLES) for user in users)
        assert len(units) == 8
        assert counts == [expected[(d, t)] for d in range(2) for t in range(SHARD_TABLES)]
        assert sum(counts) == len(users)
    finally:
        for engine in engines:
            await engine.dispose()


async def test_the_unit_of_work_commits_only_inside_its_block(engine: AsyncEngine) -> None:
    shards: Shards = sql_shards([engine], SHARD_TABLES)  # mypy checks the Protocols here
    uow: ShardUnitOfWork = shards.for_user(USER)
    with pytest.raises(RuntimeError, match="outside"):
        await uow.commit()
    async with uow:
        assert await uow.quotas.open(USER, ACTIVITY, PACK)
        await uow.commit()
    with pytest.raises(RuntimeError, match="outside"):
        await uow.commit()
    async with uow:  # a unit of work can be entered again, in a new transaction
        assert not await uow.quotas.open(USER, ACTIVITY, PACK)
