"""After delivery: players address their physical prizes; operators ship prizes and fill code
pools."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from raffle.domain.awards import AwardKind
from raffle.domain.fulfilment import (
    MAX_CODES_PER_IMPORT,
    Address,
    IllegalShipment,
    InvalidCodes,
    PoolStats,
    PrizeNotFound,
    Shipment,
    ShipmentState,
    check_codes,
    check_pool_name,
)
from raffle.service.catalogue import Catalogue
from raffle.service.ports import Clock, Shards, UnitOfWork
from raffle.service.ports.audiences import Profiles
from raffle.service.prize_claims import admit, my_prize, record_claim

SHIPPED = ShipmentState.SHIPPED


async def give_address(
    user_id: str,
    order_id: str,
    address: Address,
    *,
    catalogue: Catalogue,
    shards: Shards,
    profiles: Profiles,
    clock: Clock,
) -> Shipment:
    """Address my physical prize, also before its delivery ran (the delivery keeps it),
    and change it until it ships. Another user's order is not found, like a missing one.
    The first address claims the prize: refused once it expired, before its validity starts
    or while my profile misses a claim condition (`prize_claims.admit`)."""
    claiming = await admit(
        user_id, order_id, AwardKind.PHYSICAL,
        catalogue=catalogue, shards=shards, profiles=profiles, clock=clock,
    )  # fmt: skip
    awards = await catalogue.awards()
    now = clock.now()
    async with shards.for_user(user_id) as uow:
        found = await uow.wins.get(order_id)
        _, award = my_prize(found, awards, user_id, order_id, AwardKind.PHYSICAL)
        if (shipment := await uow.shipments.get(order_id)) is None:
            await uow.shipments.open(Shipment.awaiting(order_id, user_id, award.id, now))
        else:
            shipment.check_addressable()
        if claiming:
            await record_claim(uow, user_id, order_id, now)
        # Guarded: an operator may have shipped it since the read.
        if not await uow.shipments.set_address(order_id, address, now):
            raise IllegalShipment("the prize has shipped: its address cannot change", SHIPPED)
        shipment = await uow.shipments.get(order_id)
        await uow.commit()
    assert shipment is not None
    return shipment


async def ship(
    user_id: str, order_id: str, tracking: str | None, *, shards: Shards, clock: Clock
) -> Shipment:
    """Mark a ready shipment shipped (operators)."""
    async with shards.for_user(user_id) as uow:
        shipment = await uow.shipments.get(order_id)
        if shipment is None or shipment.user_id != user_id:
            raise PrizeNotFound(f"user {user_id} has no shipment with order {order_id}")
        shipment.check_shippable()
        if not await uow.shipments.ship(order_id, tracking, clock.now()):
            raise RuntimeError("a shipment read as ready in this transaction did not ship")
        shipped = await uow.shipments.get(order_id)
        await uow.commit()
    assert shipped is not None
    return shipped


async def shipments(
    state: ShipmentState, after: str | None, limit: int, *, shards: Shards
) -> list[Shipment]:
    """Shipments in `state` across every shard, by order id (that is, by time of the win),
    from after the order id `after`: the operators' work list, a page at a time."""
    found: list[list[Shipment]] = []
    for unit in shards.every():
        async with unit as uow:
            found.append(await uow.shipments.in_state(state, after, limit))
    merged = heapq.merge(*found, key=lambda s: s.order_id)
    return [shipment for _, shipment in zip(range(limit), merged, strict=False)]


async def import_codes(pool: str, codes: Sequence[str], uow: UnitOfWork) -> tuple[int, PoolStats]:
    """Add codes to a pool (made by its first codes); how many were new, and the pool after.
    Codes the pool holds already are skipped, so importing a file twice is harmless."""
    check_import(pool, codes)
    async with uow:
        added = await uow.code_pools.add(pool, codes)
        (stats,) = await uow.code_pools.stats([pool]) or [PoolStats(pool, 0, 0)]
        await uow.commit()
    return added, stats


async def pool_stats(uow: UnitOfWork, pool: str | None = None) -> list[PoolStats]:
    """Codes in all, handed out and free, of one pool (or of every pool)."""
    async with uow:
        found = await uow.code_pools.stats(None if pool is None else [pool])
    return found or ([PoolStats(pool, 0, 0)] if pool is not None else [])


def check_import(pool: str, codes: Sequence[str]) -> None:
    problems = [f"pool: {p}" for p in [check_pool_name(pool)] if p]
    if not codes or len(codes) > MAX_CODES_PER_IMPORT:
        problems.append(f"codes: give 1 to {MAX_CODES_PER_IMPORT:,} codes at a time")
    problems += [f"codes.{i}: {message}" for i, message in check_codes(list(codes))[:20]]
    if problems:
        raise InvalidCodes("; ".join(problems))
