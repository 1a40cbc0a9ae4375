"""The stock-sync job: the database's record of prize stock taken (the stock claims) made
consistent with what was won (the award rows). (A prize running out is an operators' notice
written by the draw whose take emptied it: service/notices.py.)

A draw takes a unit, then commits its award record; if it dies in between and cannot give
the unit back, the claim stays without a win: a unit leaked, never to be handed out. The job
finds such claims once they are older than any draw in flight could be, and gives them back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from raffle.domain.activity import Activity, ActivityState
from raffle.service.cap_counts import cap_report
from raffle.service.catalogue import Catalogue
from raffle.service.ports import PrizeStock, Shards, UnitOfWork
from raffle.service.reconcile import reconcile

log = logging.getLogger(__name__)
CHUNK = 500  # order ids looked up per statement


class ClaimLedger(Protocol):
    async def counts(self, strategy_id: int) -> dict[int, int]: ...

    async def older(self, strategy_id: int, award_id: int, before: datetime) -> list[str]:
        """The orders holding a claim of the prize made before `before`."""
        ...


async def sync_stock(
    *,
    config: Callable[[], UnitOfWork],
    catalogue: Catalogue,
    shards: Shards,
    stock: PrizeStock,
    claims: ClaimLedger,
    before: datetime,
) -> int:
    """For every running activity's strategy: give back the units claimed before `before`
    by orders with no award record. How many units were given back."""
    async with config() as uow:
        running = [a for a in await uow.activities.all() if a.state is ActivityState.RUNNING]
    given_back = 0
    for strategy_id in {a.strategy_id for a in running}:
        strategy = (await catalogue.engine(_any(running, strategy_id))).strategy
        for prize in await reconcile(strategy, shards, claims.counts, stock.left):
            if prize.leaked:
                given_back += await _give_back(prize.strategy_id, prize.award_id, shards, stock,
                                               claims, before)  # fmt: skip
    return given_back


async def _give_back(
    strategy_id: int,
    award_id: int,
    shards: Shards,
    stock: PrizeStock,
    claims: ClaimLedger,
    before: datetime,
) -> int:
    orders = await claims.older(strategy_id, award_id, before)
    won: set[str] = set()
    for uow in shards.every():
        async with uow:
            for i in range(0, len(orders), CHUNK):
                won |= await uow.wins.present(orders[i : i + CHUNK])
    leaked = [o for o in orders if o not in won]
    for order_id in leaked:
        await stock.give_back(strategy_id, award_id, order_id)
    if leaked:
        log.warning("gave back %d leaked units of prize %s/%s", len(leaked), strategy_id, award_id)
    return len(leaked)


async def sync_caps(
    *,
    config: Callable[[], UnitOfWork],
    shards: Shards,
    caps: PrizeStock,
    claims: ClaimLedger,
    before: datetime,
) -> int:
    """For every running activity with counted caps (winners, participants): give back the
    slots claimed before `before` by orders with no award record, as for prize stock. How
    many slots were given back."""
    async with config() as uow:
        running = [
            a for a in await uow.activities.all()
            if a.state is ActivityState.RUNNING and a.caps.counted
        ]  # fmt: skip
    given_back = 0
    for activity in running:
        for cap in await cap_report(config, shards, activity.id, claims.counts):
            if cap.leaked:
                given_back += await _give_back(activity.id, int(cap.cap), shards, caps, claims,
                                               before)  # fmt: skip
    return given_back


def _any(activities: list[Activity], strategy_id: int) -> Activity:
    return next(a for a in activities if a.strategy_id == strategy_id)
