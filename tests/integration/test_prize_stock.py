"""Prize stock on real Redis (one server, and a cluster) and real databases: no oversell under
concurrency, across a Redis crash, after data loss; units given back exactly once; the in-memory
stock too."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from decimal import Decimal
from types import TracebackType
from typing import Any, Self, cast

import pytest
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.prize_stock import MemoryPrizeStock, RedisPrizeStock, StockUnavailable
from raffle.adapters.redis_commands import RedisClient, RedisCommands
from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.stock_claims import Claimed, SqlStockClaims
from raffle.adapters.sql.tables.config import stock_claim
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
from raffle.service.ports import Shards, Taken
from raffle.service.reconcile import reconcile
from tests.integration.redis_clients import REDIS_KINDS, connected
from tests.services import RedisClusterServer, RedisServer

S, A = 2**40, 7  # strategy ids are BIGINT
IN_FLIGHT = 250
CRASH_AFTER_TAKES = 30
ATTEMPTS, PAUSE = 100, 0.05  # how a caller retries a take while Redis is unreachable
ARRIVAL_SECONDS = 0.0005  # between draws arriving: 3,000 over 1.5 s
OUTAGE_SECONDS = 0.2  # until a supervisor restarts the crashed Redis


class FixedClock:
    def now(self) -> datetime:
        return datetime(2026, 1, 1, tzinfo=UTC)


def configured(stock: int) -> Callable[[int], Awaitable[dict[int, int]]]:
    async def stocks(strategy_id: int) -> dict[int, int]:
        return {A: stock} if strategy_id == S else {}

    return stocks


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


@pytest.fixture
async def redis_connected(
    request: pytest.FixtureRequest, redis_kind: str
) -> AsyncIterator[tuple[RedisClient, RedisCommands]]:
    """Emptied; as many connections as draws in flight (one Redis: its callers wait for a
    free one past them)."""
    async with connected(request, redis_kind, max_connections=IN_FLIGHT) as (client, commands):
        await client.flushdb()
        yield client, commands


async def _claims(engine: AsyncEngine) -> list[tuple[int, str]]:
    """(slot, order id) of every claim of the prize, by slot."""
    query = (
        select(stock_claim.c.slot, stock_claim.c.order_id)
        .where(stock_claim.c.strategy_id == S, stock_claim.c.award_id == A)
        .order_by(stock_claim.c.slot)
    )
    async with engine.connect() as connection:
        return [(int(slot), str(order)) for slot, order in (await connection.execute(query))]


async def test_concurrent_takes_hand_out_exactly_the_stock(
    redis_commands: RedisCommands, engine: AsyncEngine
) -> None:
    stock = RedisPrizeStock(redis_commands, SqlStockClaims(engine), configured(100), FixedClock())
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def take(i: int) -> bool:
        async with gate:
            taken = await stock.take(S, A, f"order{i}")
        if taken is not None:
            lefts.append(taken.left)
        return taken is not None

    lefts: list[int] = []
    results = await asyncio.gather(*(take(i) for i in range(2_000)))

    assert results.count(True) == 100
    # Each number of units left is seen by exactly one take: where a warning is detected.
    assert sorted(lefts) == list(range(100))
    claims = await _claims(engine)
    assert [slot for slot, _ in claims] == list(range(1, 101))
    assert {order for _, order in claims} == {f"order{i}" for i, won in enumerate(results) if won}
    assert await SqlStockClaims(engine).counts(S) == {A: 100}
    assert await stock.left(S, A) == 0


class _Shard:
    """A shard holding `wins` award rows of the prize: what the draws' transactions wrote."""

    def __init__(self, wins: int) -> None:
        self.wins = self
        self._wins = wins

    async def count(self, strategy_id: int, award_id: int) -> int:
        return self._wins if (strategy_id, award_id) == (S, A) else 0

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


class _Shards:
    def __init__(self, wins: int) -> None:
        self._wins = wins

    def every(self) -> list[Any]:
        return [_Shard(self._wins)]


class _RecordingClaims(SqlStockClaims):
    """Claims that remember the slots tried, and tell when `enough` were."""

    def __init__(self, engine: AsyncEngine, enough: int) -> None:
        super().__init__(engine)
        self.attempts: list[int] = []
        self.enough, self._threshold = asyncio.Event(), enough

    async def claim(
        self, strategy_id: int, award_id: int, slot: int, order_id: str, at: datetime
    ) -> bool:
        self.attempts.append(slot)
        if len(self.attempts) == self._threshold:
            self.enough.set()
        return await super().claim(strategy_id, award_id, slot, order_id, at)


def _strategy(stock: int) -> Strategy:
    return Strategy(S, (StrategyPrize(A, Decimal("0.5"), stock=stock),), Fallback(1))


@pytest.mark.parametrize("kind", REDIS_KINDS)
async def test_a_redis_crash_mid_run_neither_oversells_nor_drifts(
    request: pytest.FixtureRequest, engine: AsyncEngine, kind: str
) -> None:
    # On the cluster every master crashes, and comes back with its slots and no data.
    redis_server: RedisServer | RedisClusterServer = request.getfixturevalue(
        f"{kind.replace('-', '_')}_server"
    )
    redis_server.start()  # a no-op unless an earlier test left it down
    crashed = redis_server.pid
    # One immediate retry in the client, which replaces a pooled connection to the dead
    # server but not an outage: a command that meets the outage fails, and the caller
    # retries the whole take, as a draw would.
    connecting = connected(
        request, kind, redis_server.url, max_connections=IN_FLIGHT, retry=Retry(NoBackoff(), 1)
    )
    async with connecting as (client, commands):
        await client.flushdb()
        loads = 0

        async def stocks(strategy_id: int) -> dict[int, int]:
            nonlocal loads
            loads += 1
            return await configured(100)(strategy_id)

        # The crash comes once a few dozen units are handed out, their claims still in flight.
        recorder = _RecordingClaims(engine, enough=CRASH_AFTER_TAKES)
        stock = RedisPrizeStock(commands, recorder, stocks, FixedClock())
        won: list[str] = []
        errors = 0

        async def take(i: int) -> bool:
            nonlocal errors
            # Draws arrive over time, as traffic does: all at once, the stock would be gone (and
            # the losers told so) before the crash, leaving no take to meet it.
            await asyncio.sleep(i * ARRIVAL_SECONDS)
            for _ in range(ATTEMPTS):
                try:
                    if await stock.take(S, A, f"order{i}") is None:
                        return False
                except (RedisConnectionError, RedisTimeoutError, StockUnavailable):
                    errors += 1
                    await asyncio.sleep(PAUSE)
                    continue
                won.append(f"order{i}")
                return True
            return False  # Redis out of reach: the draw yields no prize

        async def crash() -> None:
            await recorder.enough.wait()
            redis_server.kill()
            await asyncio.sleep(OUTAGE_SECONDS)  # Redis itself is back within milliseconds
            await asyncio.to_thread(redis_server.restart)

        crasher = asyncio.create_task(crash())
        try:
            results = await asyncio.gather(*(take(i) for i in range(3_000)))
            await asyncio.wait_for(crasher, 60)
            left = await stock.left(S, A)
            drift = await reconcile(
                _strategy(100),
                cast(Shards, _Shards(len(won))),
                recorder.counts,
                stock.left,
            )
        finally:
            crasher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await crasher
            redis_server.start()

    assert redis_server.pid != crashed  # the crash was real: new servers, no data
    # Felt by takes in flight; the cluster's commands wait out a short outage instead
    # (ClusterCommands asks again while the masters come back).
    assert errors > 0 or kind == "redis-cluster"
    assert loads >= 2  # the counter was lost and rebuilt from the claims
    claims = await _claims(engine)
    slots = [slot for slot, _ in claims]
    assert results.count(True) == len(won) == len(claims) <= 100
    assert len(set(slots)) == len(slots)
    assert set(slots) <= set(range(1, 101))
    assert {order for _, order in claims} == set(won)
    # Each counter offers a slot once: the one before the crash, the one rebuilt after it.
    assert max(Counter(recorder.attempts).values()) <= 2
    # 3,000 takes outlast a short outage: every unit finds a winner all the same.
    assert len(claims) == 100
    assert left == 0
    assert [(d.drift, d.leaked, d.unclaimed_wins, d.oversold) for d in drift] == [(0, 0, 0, 0)]


async def test_a_unit_given_back_returns_exactly_once(
    redis_commands: RedisCommands, engine: AsyncEngine
) -> None:
    stock = RedisPrizeStock(redis_commands, SqlStockClaims(engine), configured(3), FixedClock())
    assert await stock.take(S, A, "first")
    assert await stock.take(S, A, "second")
    assert await stock.left(S, A) == 1

    assert await stock.give_back(S, A, "first") == 2  # the units left after it
    assert await stock.left(S, A) == 2
    assert await stock.give_back(S, A, "first") is None  # again: nothing more comes back
    assert await stock.give_back(S, A, "never-took") is None
    assert await stock.left(S, A) == 2
    assert await _claims(engine) == [(2, "second")]

    assert await stock.take(S, A, "third") == Taken(1)  # the given-back slot, handed out again
    assert await stock.take(S, A, "fourth") == Taken(0)
    assert not await stock.take(S, A, "fifth")
    assert await _claims(engine) == [(1, "third"), (2, "second"), (3, "fourth")]


async def test_claims_made_at_once_each_learn_whether_they_hold_their_slot(
    engine: AsyncEngine,
) -> None:
    # Two orders for each of 100 slots, all at once: on PostgreSQL they go together in a
    # few statements (group commit), one claim of a slot per statement.
    claims = SqlStockClaims(engine)
    at = FixedClock().now()
    orders = [(slot, f"o{slot}-{twin}") for twin in (1, 2) for slot in range(1, 101)]

    held = await asyncio.gather(*(claims.claim(S, A, slot, o, at) for slot, o in orders))

    winners = {slot: o for (slot, o), won in zip(orders, held, strict=True) if won}
    assert sorted(winners) == list(range(1, 101))  # one of the two holds each slot
    assert await _claims(engine) == sorted(winners.items())
    assert await claims.counts(S) == {A: 100}


async def test_a_lost_counter_resumes_above_the_top_claim_and_reoffers_the_gaps(
    redis_commands: RedisCommands, engine: AsyncEngine
) -> None:
    claims = SqlStockClaims(engine)
    for slot in (1, 2, 4, 5):  # 3 was given back before Redis lost its data
        assert await claims.claim(S, A, slot, f"old{slot}", FixedClock().now())
    stock = RedisPrizeStock(redis_commands, claims, configured(6), FixedClock())
    assert await stock.left(S, A) is None

    await stock.warm(S)
    assert await stock.left(S, A) == 2
    # Stock minus the number of claims would resume at slot 5, which is claimed.
    assert await stock.take(S, A, "new1")
    assert await stock.take(S, A, "new2")
    assert not await stock.take(S, A, "new3")
    assert (await _claims(engine))[2] == (3, "new1")
    assert (await _claims(engine))[5] == (6, "new2")


async def test_a_slot_claimed_by_a_draw_in_flight_across_the_loss_is_skipped(
    redis: RedisClient, redis_commands: RedisCommands, engine: AsyncEngine
) -> None:
    claims = SqlStockClaims(engine)
    stock = RedisPrizeStock(redis_commands, claims, configured(3), FixedClock())
    assert await stock.take(S, A, "before")  # slot 1
    await redis.flushdb()  # Redis loses its data while a draw holds slot 2, not yet claimed
    await stock.warm(S)
    assert await claims.claim(S, A, 2, "in-flight", FixedClock().now())  # it lands now

    assert await stock.take(S, A, "after")  # offered slot 2, refused by the key, takes 3
    assert not await stock.take(S, A, "late")
    assert await _claims(engine) == [(1, "before"), (2, "in-flight"), (3, "after")]
    assert await stock.left(S, A) == 0


async def test_rebuild_recovers_units_the_counter_lost(
    redis_commands: RedisCommands, engine: AsyncEngine
) -> None:
    claims = SqlStockClaims(engine)
    stock = RedisPrizeStock(redis_commands, claims, configured(5), FixedClock())
    for order in ("a", "b", "c"):
        assert await stock.take(S, A, order)
    assert await claims.release(S, A, "b") == [2]  # a draw died before giving it back to Redis
    drift = await reconcile(_strategy(5), cast(Shards, _Shards(2)), claims.counts, stock.left)
    assert drift[0].drift == 1

    await stock.rebuild(S)
    assert await stock.left(S, A) == 3
    assert await stock.take(S, A, "d")
    assert (await _claims(engine))[1] == (2, "d")


async def test_an_award_without_configured_stock_is_never_taken(
    redis_commands: RedisCommands, engine: AsyncEngine
) -> None:
    stock = RedisPrizeStock(redis_commands, SqlStockClaims(engine), configured(5), FixedClock())
    assert not await stock.take(S, A + 1, "order")
    assert not await stock.take(S + 1, A, "order")
    assert await _claims(engine) == []
    assert await stock.left(S, A) == 5  # its own strategy's prizes were loaded on the way


async def test_claims_refuse_a_taken_slot_without_raising(engine: AsyncEngine) -> None:
    claims = SqlStockClaims(engine)
    now = FixedClock().now()
    assert await claims.claim(S, A, 1, "one", now)
    assert not await claims.claim(S, A, 1, "two", now)
    assert await claims.claim(S, A, 3, "three", now)  # no aborted transaction left behind
    assert await claims.claim(S, A + 1, 1, "other prize", now)
    assert await claims.counts(S) == {A: 2, A + 1: 1}
    assert await claims.claimed(S) == {A: Claimed(3, (2,)), A + 1: Claimed(1, ())}
    assert await claims.release(S, A, "one") == [1]
    assert await claims.release(S, A, "one") == []
    assert await claims.claimed(S) == {A: Claimed(3, (1, 2)), A + 1: Claimed(1, ())}
    assert await claims.claimed(S + 1) == {}


async def test_memory_stock_hands_out_exactly_its_stock_under_concurrency() -> None:
    loads: list[int] = []

    async def load(strategy_id: int) -> dict[int, int]:
        loads.append(strategy_id)
        await asyncio.sleep(0.01)  # concurrent first takes wait for one load
        return {A: 10} if strategy_id == S else {}

    stock = MemoryPrizeStock(load)

    async def take(i: int) -> bool:
        await asyncio.sleep(0)  # interleave the takers
        return await stock.take(S, A, f"order{i}") is not None

    assert await stock.left(S, A) == 10  # a look does not load
    results = await asyncio.gather(*(take(i) for i in range(1_000)))
    assert results.count(True) == 10
    assert loads == [S, S]
    assert await stock.left(S, A) == 0
    winner = f"order{results.index(True)}"
    await stock.give_back(S, A, winner)
    await stock.give_back(S, A, winner)
    await stock.give_back(S, A, "order-that-lost")
    assert await stock.left(S, A) == 1
    assert await stock.take(S + 1, A, "x") is None
