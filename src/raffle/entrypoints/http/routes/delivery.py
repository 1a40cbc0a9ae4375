"""Operators: deliveries that failed for good, sending one again, and the delivery counts."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel

from raffle.domain.draws import Win
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.bounds import ActivityId, Id, OrderId
from raffle.entrypoints.http.deps import AdminSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.examples import examples_of
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.service.delivery import delivery_counts, failed_deliveries, resend
from raffle.service.delivery_report import delivery_report

router = APIRouter(prefix="/api/admin/deliveries", tags=["operator"])

MAX_AGE = 366 * 24 * 3600  # seconds: a year; older is all the same


class DeliveryErrorOut(BaseModel):
    code: str  # a RaffleError's stable code (`code_pool_empty`, ...), else `internal`
    message: str


class WinOut(BaseModel):
    model_config = examples_of(examples.WIN)

    order_id: str
    user_id: str
    activity_id: int
    award_id: int
    points: int | None
    state: str
    created_at: datetime
    error: DeliveryErrorOut | None = None  # why the last delivery attempt failed

    @classmethod
    def of(cls, win: Win) -> WinOut:
        return cls(
            order_id=win.order_id,
            user_id=win.user_id,
            activity_id=win.activity_id,
            award_id=win.award_id,
            points=win.points,
            state=win.state.value,
            created_at=win.created_at,
            error=None if win.error is None else DeliveryErrorOut(**asdict(win.error)),
        )


class DeliveryCountsOut(BaseModel):
    model_config = examples_of(examples.DELIVERY_COUNTS)

    records: int
    created: int
    completed: int
    failed: int
    delivered: int
    unpublished: int


class PrizeDeliveriesOut(BaseModel):
    model_config = examples_of(examples.PRIZE_DELIVERIES)

    award_id: int
    kind: str
    stock: int | None
    records: int
    created: int
    completed: int
    failed: int
    delivered: int
    consistent: bool


@router.get("/activities/{activity_id}", responses=documented(401, 403, 404))
async def activity_report(
    activity_id: ActivityId, session: AdminSession, raffle: RaffleDep
) -> list[PrizeDeliveriesOut]:
    """Per prize won in the activity: award records by state, delivered effects and stock.
    `consistent` is completed = delivered and records within stock."""
    found = await delivery_report(activity_id, catalogue=raffle.catalogue, shards=raffle.shards)
    return [
        PrizeDeliveriesOut(
            award_id=p.award_id,
            kind=p.kind,
            stock=p.stock,
            records=p.records,
            created=p.created,
            completed=p.completed,
            failed=p.failed,
            delivered=p.delivered,
            consistent=p.consistent,
        )
        for p in found
    ]


@router.get("/failed", responses=documented(401, 403))
async def failed(
    session: AdminSession,
    raffle: RaffleDep,
    limit: int = Query(100, ge=1, le=1000),
    activity_id: Annotated[Id | None, Query(examples=[100301])] = None,
) -> list[WinOut]:
    """Award records whose delivery failed for good (dead-lettered), oldest first; only
    those of `activity_id` if given."""
    found = await failed_deliveries(raffle.shards, limit, activity_id)
    return [WinOut.of(w) for w in found]


@router.post("/{order_id}/resend", response_model=WinOut, responses=documented(401, 403, 404, 409))
async def send_again(
    order_id: OrderId,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Send a failed delivery again (after its cause was fixed): the record goes back to
    `create` and a new message is relayed."""

    async def run() -> WinOut:
        now = raffle.clock.now()
        return WinOut.of(await resend(order_id, raffle.shards, now, by=session.user_id))

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get("/counts", responses=documented(401, 403))
async def counts(
    session: AdminSession,
    raffle: RaffleDep,
    unpublished_after_seconds: Annotated[
        float, Query(ge=0, le=MAX_AGE, allow_inf_nan=False)
    ] = 60.0,
) -> DeliveryCountsOut:
    """Award records by state against delivered effects, and outbox messages still not
    published that many seconds after they were written: completed = delivered and no old
    unpublished message is a healthy pipeline."""
    before = raffle.clock.now() - timedelta(seconds=unpublished_after_seconds)
    found = await delivery_counts(raffle.shards, before)
    return DeliveryCountsOut(
        records=found.records,
        created=found.created,
        completed=found.completed,
        failed=found.failed,
        delivered=found.delivered,
        unpublished=found.unpublished,
    )
