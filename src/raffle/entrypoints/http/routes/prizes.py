"""Prizes after the draw: my prizes and their delivery, my shipping addresses;
operators' code pools and shipments."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from raffle.domain.fulfilment import ShipmentState
from raffle.entrypoints.http.bounds import Cursor, Limit, OrderId
from raffle.entrypoints.http.deps import AdminSession, CurrentSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.prize_schemas import (
    AddressBody,
    CodesIn,
    ImportOut,
    PoolOut,
    ShipIn,
    ShipmentOut,
    ShipmentsOut,
)
from raffle.entrypoints.http.problems import documented
from raffle.entrypoints.http.schemas import DrawOut, HistoryOut
from raffle.service.fulfilment import give_address, import_codes, pool_stats, ship
from raffle.service.fulfilment import shipments as shipments_in
from raffle.service.wins import my_wins

router = APIRouter()

PoolName = Annotated[str, Path(max_length=64, description="The name coupon awards give.")]


@router.get("/api/me/prizes", tags=["player"], responses=documented(401))
async def my_prizes(
    session: CurrentSession,
    raffle: RaffleDep,
    before: Cursor = None,
    limit: Limit = 20,
) -> HistoryOut:
    """My draws in every activity, newest first, each with the state of its delivery and
    what the delivery left: a coupon's code, the content opened, a shipment and its address."""
    page = await my_wins(
        session.user_id,
        None,
        before,
        limit,
        catalogue=raffle.catalogue,
        shards=raffle.shards,
        config=raffle.uow,
    )
    return HistoryOut(draws=[DrawOut.of_won(p) for p in page.prizes], next=page.next)


@router.put(
    "/api/me/prizes/{order_id}/address",
    tags=["player"],
    response_model=ShipmentOut,
    responses=documented(401, 404, 409, 422),
)
async def address(
    order_id: OrderId,
    body: AddressBody,
    request: Request,
    session: CurrentSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Where my physical prize goes: accepted from the win on (before delivery ran too) and
    changeable until it ships (then 409). A prize that is not mine is a 404 like a missing one."""

    async def run() -> ShipmentOut:
        found = await give_address(
            session.user_id,
            order_id,
            body.to_address(),
            catalogue=raffle.catalogue,
            shards=raffle.shards,
            clock=raffle.clock,
        )
        return ShipmentOut.of(found)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get("/api/admin/code-pools", tags=["operator"], responses=documented(401, 403))
async def pools(session: AdminSession, raffle: RaffleDep) -> list[PoolOut]:
    """Every coupon code pool: codes in all, handed out, free."""
    return [PoolOut.of(p) for p in await pool_stats(raffle.uow())]


@router.get("/api/admin/code-pools/{pool}", tags=["operator"], responses=documented(401, 403))
async def pool(pool: PoolName, session: AdminSession, raffle: RaffleDep) -> PoolOut:
    """One pool (all zero if it has no codes yet)."""
    (found,) = await pool_stats(raffle.uow(), pool)
    return PoolOut.of(found)


@router.post(
    "/api/admin/code-pools/{pool}/codes",
    tags=["operator"],
    response_model=ImportOut,
    responses=documented(401, 403, 409, 422),
)
async def add_codes(
    pool: PoolName,
    body: CodesIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Import codes into a pool (created by its first codes). Codes it holds are skipped,
    so sending a file twice adds nothing; each code is handed out once, to one order."""

    async def run() -> ImportOut:
        added, stats = await import_codes(pool, body.codes, raffle.uow())
        return ImportOut(added=added, pool=PoolOut.of(stats))

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get("/api/admin/shipments", tags=["operator"], responses=documented(401, 403))
async def shipment_list(
    session: AdminSession,
    raffle: RaffleDep,
    state: ShipmentState = ShipmentState.READY,
    after: Cursor = None,
    limit: Limit = 50,
) -> ShipmentsOut:
    """Shipments in a state (by default ready: addressed, to ship), oldest win first."""
    found = await shipments_in(state, after, limit + 1, shards=raffle.shards)
    page = found[:limit]
    return ShipmentsOut(
        shipments=[ShipmentOut.of(s) for s in page],
        next=page[-1].order_id if len(found) > limit else None,
    )


@router.post(
    "/api/admin/shipments/{order_id}/shipped",
    tags=["operator"],
    response_model=ShipmentOut,
    responses=documented(401, 403, 404, 409, 422),
)
async def shipped(
    order_id: OrderId,
    body: ShipIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Mark a ready shipment shipped, with the carrier's tracking number. One that is not
    ready (no address yet, or shipped already) is a 409 naming its state."""

    async def run() -> ShipmentOut:
        done = await ship(
            body.user_id, order_id, body.tracking, shards=raffle.shards, clock=raffle.clock
        )
        return ShipmentOut.of(done)

    return await once(request, raffle.idempotency, session.user_id, key, run)
