"""What draws read on every request — activities, engines, packs, SKUs — cached per process."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

from raffle.domain.activity import FROZEN, Activity
from raffle.domain.awards import Award
from raffle.domain.draws import UnknownActivity
from raffle.domain.engine import DrawEngine
from raffle.domain.errors import RaffleError
from raffle.domain.policies import Participation
from raffle.domain.quota import QuotaPack, Sku
from raffle.domain.rebates import RebateRule
from raffle.domain.switches import without_rules
from raffle.service.ports import UnitOfWork

T = TypeVar("T")


class UnknownSku(RaffleError):
    code = "unknown_sku"


class Catalogue:
    """Reads configuration through short-lived caches.

    Entries are re-read after `ttl` seconds, so a change made by another process is seen
    within that time. Engines of frozen (running or closed) activities are kept until the
    next forget(): their odds change only by a rule switched off or on (`rules_off`, the
    switched-off rules of a strategy), and the engine remembers which prizes ran out.
    """

    def __init__(
        self,
        uow: Callable[[], UnitOfWork],
        ttl: float = 1.0,
        rules_off: Callable[[int], frozenset[str]] = lambda strategy_id: frozenset(),
    ) -> None:
        self._uow = uow
        self._ttl = ttl
        self._rules_off = rules_off
        self._entries: dict[tuple[str, int], tuple[float, Any]] = {}
        self._engines: dict[
            tuple[int, bool], DrawEngine
        ] = {}  # by strategy, and whether every draw wins
        self._loading: dict[tuple[str, int], asyncio.Future[Any]] = {}
        self._generation = 0  # what forget() moves on, so that older loads are not kept

    async def activity(self, activity_id: int) -> Activity:
        async def load(uow: UnitOfWork) -> Activity | None:
            return await uow.activities.get(activity_id)

        found = await self._cached(("activity", activity_id), load)
        if found is None:
            raise UnknownActivity(f"activity {activity_id} does not exist")
        return found

    async def engine(self, activity: Activity) -> DrawEngine:
        """The draw engine of the activity's strategy; one where every draw wins if it says so."""
        key = (activity.strategy_id, activity.caps.perfect)
        if (engine := self._engines.get(key)) is not None:
            return engine
        generation = self._generation
        async with self._uow() as uow:
            strategy = await uow.strategies.get(activity.strategy_id)
            awards = await uow.awards.all()
        if strategy is None:
            raise UnknownActivity(f"activity {activity.id} has no strategy")
        engine = DrawEngine(
            without_rules(strategy, self._rules_off(strategy.id)), awards,
            perfect=activity.caps.perfect,
        )  # fmt: skip
        if activity.state in FROZEN and generation == self._generation:
            self._engines[key] = engine
        return engine

    async def awards(self) -> dict[int, Award]:
        async def load(uow: UnitOfWork) -> dict[int, Award]:
            return await uow.awards.all()

        return await self._cached(("awards", 0), load)

    async def pack(self, pack_id: int) -> QuotaPack:
        async def load(uow: UnitOfWork) -> QuotaPack | None:
            return await uow.packs.get(pack_id)

        if (pack := await self._cached(("pack", pack_id), load)) is None:
            raise UnknownSku(f"quota pack {pack_id} does not exist")
        return pack

    async def welcome(self, activity: Activity) -> QuotaPack | None:
        """The pack a user's first visit to the activity opens their account with, if any."""
        return await self.pack(activity.welcome_pack) if activity.welcome_pack else None

    async def sku(self, sku_id: int) -> Sku:
        async def load(uow: UnitOfWork) -> Sku | None:
            return await uow.skus.get(sku_id)

        if (sku := await self._cached(("sku", sku_id), load)) is None:
            raise UnknownSku(f"SKU {sku_id} does not exist")
        return sku

    async def rebate_rules(self, activity_id: int) -> dict[str, RebateRule]:
        """The activity's rebate rules by behaviour."""

        async def load(uow: UnitOfWork) -> dict[str, RebateRule]:
            return {r.behaviour: r for r in await uow.rebate_rules.for_activity(activity_id)}

        return await self._cached(("rebate_rules", activity_id), load)

    async def participation(self, activity_id: int) -> Participation:
        """The activity's participation policies and caps (empty ones if it has none)."""

        async def load(uow: UnitOfWork) -> Participation:
            return await uow.participation.get(activity_id)

        return await self._cached(("participation", activity_id), load)

    def forget(self) -> None:
        """Drop every cached entry (after this process changed configuration)."""
        self._entries.clear()
        self._engines.clear()
        self._loading.clear()  # a load in flight may have read the old configuration
        self._generation += 1

    async def _cached(self, key: tuple[str, int], load: Callable[[UnitOfWork], Awaitable[T]]) -> T:
        entry = self._entries.get(key)
        if entry is not None and entry[0] > time.monotonic():
            value: T = entry[1]
            return value
        # One load per key at a time: under load, every request in flight finds the entry
        # expired at once, and each reading it again (on SQLite, each taking a turn of the
        # process's one writer) made a stall every `ttl` seconds.
        task = self._loading.get(key)
        if task is None:
            task = asyncio.ensure_future(self._load(key, load))
            self._loading[key] = task
            task.add_done_callback(partial(self._loaded, key))
        found: T = await asyncio.shield(task)  # a request cancelled does not cancel the load
        return found

    async def _load(self, key: tuple[str, int], load: Callable[[UnitOfWork], Awaitable[T]]) -> T:
        generation = self._generation
        async with self._uow() as uow:
            value = await load(uow)
        if generation == self._generation:
            self._entries[key] = (time.monotonic() + self._ttl, value)
        return value

    def _loaded(self, key: tuple[str, int], task: asyncio.Future[Any]) -> None:
        if self._loading.get(key) is task:
            del self._loading[key]
        if not task.cancelled():
            task.exception()  # seen by its waiters; not "never retrieved" if none was left
