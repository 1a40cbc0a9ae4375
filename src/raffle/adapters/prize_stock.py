"""Prize stock behind the PrizeStock port: Redis as the fast gate in front of SQL claims, or
process memory for the single-process embedded default.

Each unit of a stocked prize is a slot numbered 1..stock. Redis hands slots out; a claim row
keyed by (strategy, award, slot) makes each one count, so no cache state can oversell.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from contextlib import suppress
from functools import partial

from redis.exceptions import RedisError

from raffle.adapters.redis_commands import RedisCommands
from raffle.adapters.redis_pipeline import LuaScript
from raffle.adapters.sql.stock_claims import Claimed, SqlStockClaims
from raffle.domain.errors import Unavailable
from raffle.service.ports import Clock, Taken

ConfiguredStock = Callable[[int], Awaitable[dict[int, int]]]  # strategy id -> award -> stock

NOT_LOADED = -1  # what the scripts answer when Redis does not hold the prize's counter
LOCK_MS = 5_000  # a warm-up left unfinished by a dead process blocks the others this long
WARM_TIMEOUT_SECONDS = 10.0
WAIT_SECONDS = 0.01  # between tries for the lock while another process loads

# Per prize: the counter (slots never handed out; the next is stock - counter + 1), a sorted
# set of slots handed out and given back, and the strategy's "total" hash of configured stock.
# Units left = counter + free slots. A free slot is used before the counter moves. A take
# answers its slot and the units left after it, read in the same script: of concurrent takes
# exactly one sees each number (stock warnings, domain/notices.py).
_TAKE = LuaScript("""
local stock = redis.call('HGET', KEYS[3], ARGV[1])
local counter = redis.call('GET', KEYS[1])
if not stock or not counter then return {-1, 0} end
local free = redis.call('ZPOPMIN', KEYS[2])
if free[1] then
  return {tonumber(free[1]), tonumber(counter) + redis.call('ZCARD', KEYS[2])}
end
counter = tonumber(counter)
if counter <= 0 then return {0, 0} end
redis.call('DECR', KEYS[1])
return {tonumber(stock) - counter + 1, counter - 1 + redis.call('ZCARD', KEYS[2])}
""")

# A slot is freed only if this counter handed it out (slot <= stock - counter): a slot above
# it is still counted as never handed out, so freeing it would offer it twice. The units left
# after it, or -1 when nothing came back.
_FREE = LuaScript("""
local stock = redis.call('HGET', KEYS[3], ARGV[1])
local counter = redis.call('GET', KEYS[1])
if not stock or not counter then return 0 end
if tonumber(ARGV[2]) > tonumber(stock) - tonumber(counter) then return -1 end
if redis.call('ZADD', KEYS[2], ARGV[2], ARGV[2]) == 0 then return -1 end
return tonumber(counter) + redis.call('ZCARD', KEYS[2])
""")

_LEFT = LuaScript("""
local stock = redis.call('HGET', KEYS[3], ARGV[1])
local counter = redis.call('GET', KEYS[1])
if not stock or not counter then return -1 end
return tonumber(counter) + redis.call('ZCARD', KEYS[2])
""")

# Loads a prize unless it is loaded and ARGV[4] asks not to replace it: a warm-up that read
# the database before another finished loading must not write its older picture over
# counters already in use.
_LOAD = LuaScript("""
local loaded = redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 and redis.call('EXISTS', KEYS[1]) == 1
if loaded and ARGV[4] == '0' then return 0 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('SET', KEYS[1], ARGV[3])
redis.call('DEL', KEYS[2])
for i = 5, #ARGV do redis.call('ZADD', KEYS[2], ARGV[i], ARGV[i]) end
return 1
""")

_UNLOCK = LuaScript("""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
""")


class StockUnavailable(Unavailable):
    """Redis did not answer, or the prize's counter could not be loaded into it in time."""

    code = "stock_unavailable"


def _tag(strategy_id: int, name: str = "stock") -> str:
    # One hash tag per strategy: a strategy's keys share a Redis Cluster slot, as scripts need.
    return f"raffle:{{{name}:{strategy_id}}}"


def _keys(strategy_id: int, award_id: int, name: str = "stock") -> list[str]:
    tag = _tag(strategy_id, name)
    return [f"{tag}:{award_id}", f"{tag}:{award_id}:free", f"{tag}:total"]


class RedisPrizeStock:
    """Slots handed out by Redis, each recorded as a claim in the database before it counts.

    When Redis has lost a prize's counter (a restart without persistence, an eviction) it is
    rebuilt from the claims under a short lock: the counter resumes above the highest claimed
    slot and the unclaimed slots below it become free again. Resuming at stock minus the
    *number* of claims instead would, after a slot below the top was given back, hand out
    the top slot a second time. A draw still in flight from before the loss may hold a slot
    it has not yet claimed, which the rebuilt counter offers again: the claim's primary key
    lets one of the two have it, and the other goes on to the next slot.

    `name` sets the keys apart: "stock" for prizes (strategy, award), "caps" for an
    activity's caps (activity, Cap), counted the same way over claims of their own.
    """

    def __init__(
        self,
        commands: RedisCommands,
        claims: SqlStockClaims,
        stocks: ConfiguredStock,
        clock: Clock,
        name: str = "stock",
    ) -> None:
        self._commands, self._claims, self._stocks, self._clock = commands, claims, stocks, clock
        self._name = name
        self._run = commands.run
        self._loading: dict[int, asyncio.Task[dict[int, int]]] = {}

    async def take(self, strategy_id: int, award_id: int, order_id: str) -> Taken | None:
        """Claim one unit for `order_id`; None when none is left or the award has no stock
        configured in the strategy."""
        while (reserved := await self._reserve_or_fail(strategy_id, award_id))[0]:
            slot, left = reserved
            try:
                now = self._clock.now()
                if await self._claims.claim(strategy_id, award_id, slot, order_id, now):
                    return Taken(left)
            except Exception:
                # Most likely nothing was written: the slot goes back rather than being lost.
                # Had the claim been written after all, the key refuses the slot's next taker.
                with suppress(RedisError):
                    await self._run(_FREE, self._keys(strategy_id, award_id), [award_id, slot])
                raise
            # The slot was claimed by a draw in flight across a loss of Redis: try the next.
        return None

    def _keys(self, strategy_id: int, award_id: int) -> list[str]:
        return _keys(strategy_id, award_id, self._name)

    async def _reserve_or_fail(self, strategy_id: int, award_id: int) -> tuple[int, int]:
        try:
            return await self._reserve(strategy_id, award_id)
        except RedisError as error:
            raise StockUnavailable(f"prize stock is unavailable: {error}") from error

    async def give_back(self, strategy_id: int, award_id: int, order_id: str) -> int | None:
        """Release the order's claim and offer its slot again; a no-op if it held none, so a
        unit is never returned twice. Redis errors propagate after the release: the unit is
        then missing from the counter until it is next rebuilt. The units left after it,
        None when nothing came back."""
        left = None
        for slot in await self._claims.release(strategy_id, award_id, order_id):
            freed = int(await self._run(_FREE, self._keys(strategy_id, award_id), [award_id, slot]))
            left = None if freed < 0 else freed
        return left

    async def left(self, strategy_id: int, award_id: int) -> int | None:
        """Units Redis would still hand out; None if it holds no counter for the prize."""
        left = int(await self._run(_LEFT, self._keys(strategy_id, award_id), [award_id]))
        return None if left == NOT_LOADED else left

    async def warm(self, strategy_id: int) -> None:
        """Load the counters of the strategy's stocked prizes that Redis does not hold."""
        await self._loaded(strategy_id)

    async def prepare(self, strategy_id: int) -> None:
        """Nothing to do: a missing counter is loaded inside `take`, on the claims' own pool,
        which is also what happens after Redis lost its data mid-run."""

    async def rebuild(self, strategy_id: int) -> None:
        """Reload every counter of the strategy from the claims, the remedy for drift (units
        the counter lost to draws that died between taking and claiming). Safe while draws
        run: a slot offered again while a draw holds it unclaimed goes to the first claim."""
        await self._load_when_free(strategy_id, replace=True)

    async def _reserve(self, strategy_id: int, award_id: int) -> tuple[int, int]:
        """A slot for one unit and the units left after it, or slot 0 when none is left."""
        keys = self._keys(strategy_id, award_id)
        while (slot := int((taken := await self._run(_TAKE, keys, [award_id]))[0])) == NOT_LOADED:
            if award_id not in await self._loaded(strategy_id):
                return 0, 0
        return slot, int(taken[1])

    async def _loaded(self, strategy_id: int) -> dict[int, int]:
        """Load the strategy's missing counters, once per process however many draws find
        them missing at once (hundreds polling for the lock would starve the loader); the
        configured stock."""
        task = self._loading.get(strategy_id)
        if task is None:
            task = asyncio.ensure_future(self._load_when_free(strategy_id))
            self._loading[strategy_id] = task
            task.add_done_callback(partial(self._forget, strategy_id))
        return await asyncio.shield(task)  # a draw cancelled does not cancel the others' load

    def _forget(self, strategy_id: int, task: asyncio.Task[dict[int, int]]) -> None:
        if self._loading.get(strategy_id) is task:
            del self._loading[strategy_id]
        if not task.cancelled():
            task.exception()  # seen by its waiters; not "never retrieved" if they were cancelled

    async def _load_when_free(self, strategy_id: int, *, replace: bool = False) -> dict[int, int]:
        """Load under the strategy's Redis lock, waiting while another process holds it."""
        deadline = asyncio.get_running_loop().time() + WARM_TIMEOUT_SECONDS
        while (stocks := await self._load_locked(strategy_id, replace=replace)) is None:
            if asyncio.get_running_loop().time() > deadline:
                raise StockUnavailable(f"stock counters of strategy {strategy_id} not loaded")
            await asyncio.sleep(WAIT_SECONDS)
        return stocks

    async def _load_locked(
        self, strategy_id: int, *, replace: bool = False
    ) -> dict[int, int] | None:
        """Load the missing counters under the strategy's lock; the configured stock, or None
        when another process holds the lock."""
        lock, token = f"{_tag(strategy_id, self._name)}:loading", secrets.token_hex(16)
        if not await self._commands.execute("SET", lock, token, "NX", "PX", LOCK_MS):
            return None
        try:
            return await self._load_all(strategy_id, replace)
        finally:
            with suppress(RedisError):  # left in place, the lock expires by itself
                await self._run(_UNLOCK, [lock], [token])

    async def _load_all(self, strategy_id: int, replace: bool) -> dict[int, int]:
        stocks = await self._stocks(strategy_id)
        claimed = await self._claims.claimed(strategy_id)
        for award_id, stock in stocks.items():
            found = claimed.get(award_id, Claimed(0, ()))
            slots = [slot for slot in found.free if slot <= stock]
            args = [award_id, stock, stock - min(found.top, stock), int(replace), *slots]
            await self._run(_LOAD, self._keys(strategy_id, award_id), args)
        return stocks


class MemoryPrizeStock:
    """Units left per (strategy, award) in process memory, for the single-process embedded
    default. Atomic on one event loop: nothing awaits between the check and the change.

    A strategy's counters are loaded before its first draw (configured stock less its award
    rows, from `load`), that is once its activity runs and its odds are frozen: no later
    edit can leave them stale, and nothing of it is in flight in this process meanwhile.
    """

    def __init__(self, load: ConfiguredStock) -> None:
        self._load = load
        self._left: dict[tuple[int, int], int] = {}
        self._loaded: dict[int, asyncio.Lock] = {}
        self._ready: set[int] = set()
        self._holders: defaultdict[tuple[int, int], Counter[str]] = defaultdict(Counter)

    async def prepare(self, strategy_id: int) -> None:
        if strategy_id not in self._ready:
            await self._warm(strategy_id)

    async def warm(self, strategy_id: int) -> None:
        await self.prepare(strategy_id)

    async def take(self, strategy_id: int, award_id: int, order_id: str) -> Taken | None:
        await self.prepare(strategy_id)
        key = (strategy_id, award_id)
        if self._left.get(key, 0) <= 0:
            return None
        self._left[key] -= 1
        self._holders[key][order_id] += 1
        return Taken(self._left[key])

    async def give_back(self, strategy_id: int, award_id: int, order_id: str) -> int | None:
        key = (strategy_id, award_id)
        holders = self._holders.get(key)
        if holders is None or holders[order_id] <= 0:
            return None  # never taken, or returned already
        holders[order_id] -= 1
        if holders[order_id] == 0:
            del holders[order_id]
        self._left[key] += 1
        return self._left[key]

    async def left(self, strategy_id: int, award_id: int) -> int | None:
        if strategy_id in self._ready:
            return self._left.get((strategy_id, award_id))
        return (await self._load(strategy_id)).get(award_id)  # a look, not a warm-up

    async def _warm(self, strategy_id: int) -> None:
        async with self._loaded.setdefault(strategy_id, asyncio.Lock()):
            if strategy_id in self._ready:
                return
            for award_id, left in (await self._load(strategy_id)).items():
                self._left[strategy_id, award_id] = left
            self._ready.add(strategy_id)
