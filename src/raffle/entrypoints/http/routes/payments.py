"""Payments: players order content and pay its QR; the gateway notifies; operators follow
orders, refunds and the reconciliation."""

from __future__ import annotations

import logging
from typing import Annotated
from urllib.parse import parse_qsl

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import PlainTextResponse, Response
from pydantic import BaseModel, Field

from raffle.adapters import qr_images
from raffle.domain.payments import OrderState, PaymentState
from raffle.entrypoints.http.deps import AdminSession, CurrentSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.examples import examples_of
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.payment_schemas import (
    ChangeOut,
    OrderDetailOut,
    PaymentOrderIn,
    PaymentOrderOut,
    PaymentOut,
    ReconciliationOut,
)
from raffle.entrypoints.http.problems import documented
from raffle.service import payment_desk as desk
from raffle.service import payments as use
from raffle.service.payment_jobs import reconcile
from raffle.service.payment_notices import receive
from raffle.service.payment_settling import retry_refund

log = logging.getLogger(__name__)
router = APIRouter()

NOTIFY_MAX = 16 * 1024  # bytes: Alipay's notifications are well under 2 KiB
OrderNo = Annotated[
    str,
    Path(
        min_length=3,
        max_length=40,
        pattern=r"^[0-9a-f]{24}_[0-9]{1,4}$",
        examples=["0193f2a4c5d6a1b2c3d4e5f6_3"],
    ),
]
TradeNo = Annotated[
    str,
    Path(min_length=1, max_length=64, pattern=r"^\w+$", examples=["2026112522001400001234567890"]),
]
Limit = Annotated[int, Query(ge=1, le=100)]


class QrOut(BaseModel):
    model_config = examples_of(
        {
            "qr_code": "https://qr.alipay.com/bax00000000000000000000",
            "svg": '<svg xmlns="http://www.w3.org/2000/svg" width="174" height="174">…</svg>',
        }
    )

    qr_code: str = Field(description="The QR code's content: the gateway's pay link.")
    svg: str = Field(description="The QR code drawn as SVG.")


@router.post(
    "/api/payments/orders",
    tags=["player"],
    response_model=PaymentOrderOut,
    responses=documented(401, 404, 409, 422, 503),
)
async def new_order(
    body: PaymentOrderIn,
    request: Request,
    session: CurrentSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """An order of the content at its price now; my open order of it, if I have one (409
    `content_held` when I hold it already)."""

    async def run() -> PaymentOrderOut:
        made = await use.order(session.user_id, body.content_id, raffle.payments())
        return PaymentOrderOut.of(made)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get("/api/payments/orders", tags=["player"], responses=documented(401, 404, 422))
async def my_orders(
    session: CurrentSession,
    raffle: RaffleDep,
    before: Annotated[str | None, Query(max_length=40)] = None,
    limit: Limit = 20,
) -> list[PaymentOrderOut]:
    """My orders, newest first (`before`: the last out_trade_no of the page before)."""
    found = await use.my_orders(session.user_id, raffle.shards, before, limit)
    return [PaymentOrderOut.of(o) for o in found]


@router.get(
    "/api/payments/orders/{out_trade_no}", tags=["player"], responses=documented(401, 404, 422, 503)
)
async def my_order(
    out_trade_no: OrderNo, session: CurrentSession, raffle: RaffleDep
) -> PaymentOrderOut:
    """My order: what a page polls until it is paid."""
    return PaymentOrderOut.of(await use.mine(session.user_id, out_trade_no, raffle.payments()))


@router.get(
    "/api/payments/orders/{out_trade_no}/qr",
    tags=["player"],
    responses=documented(401, 404, 409, 422, 502, 503),
)
async def qr(out_trade_no: OrderNo, session: CurrentSession, raffle: RaffleDep) -> QrOut:
    """The QR code of my open order (409 `payment_order_not_open` once paid or closed)."""
    content = await use.qr_code(session.user_id, out_trade_no, raffle.payments())
    return QrOut(qr_code=content, svg=qr_images.svg(content).decode())


@router.get(
    "/api/payments/orders/{out_trade_no}/qr.png",
    tags=["player"],
    responses={
        200: {
            "content": {
                "image/png": {
                    "schema": {"type": "string", "format": "binary"},
                    "example": "(PNG bytes)",
                }
            }
        },
        **documented(401, 404, 409, 422, 502, 503),
    },
    response_class=Response,
)
async def qr_png(out_trade_no: OrderNo, session: CurrentSession, raffle: RaffleDep) -> Response:
    """The QR code of my open order as a PNG image."""
    content = await use.qr_code(session.user_id, out_trade_no, raffle.payments())
    return Response(qr_images.png(content), media_type="image/png")


@router.post(
    "/api/payments/orders/{out_trade_no}/cancel",
    tags=["player"],
    responses=documented(401, 404, 409, 422, 502, 503),
)
async def cancel(
    out_trade_no: OrderNo, session: CurrentSession, raffle: RaffleDep
) -> PaymentOrderOut:
    """Close my open order, at the gateway and here."""
    return PaymentOrderOut.of(await use.cancel(session.user_id, out_trade_no, raffle.payments()))


@router.post(
    "/api/payments/alipay/notify",
    tags=["gateway"],
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/plain": {"example": "success"}}}},
)
async def notify(request: Request, raffle: RaffleDep) -> PlainTextResponse:
    """Alipay's asynchronous notification (form-encoded): `success` once it is verified,
    its order and amount checked, and recorded; `failure` otherwise, nothing changed."""
    body = await request.body()
    if len(body) > NOTIFY_MAX or raffle.gateway is None:
        return PlainTextResponse("failure")
    try:
        form = dict(parse_qsl(body.decode(), keep_blank_values=True, strict_parsing=False))
        recorded = await receive(form, raffle.payments())
    except Exception:  # the gateway notifies again; it must never hear success now
        log.exception("notification not recorded")
        recorded = False
    return PlainTextResponse("success" if recorded else "failure")


@router.get(
    "/api/admin/payments/orders", tags=["operator"], responses=documented(401, 403, 404, 422)
)
async def orders(
    session: AdminSession, raffle: RaffleDep, state: OrderState | None = None, limit: Limit = 50
) -> list[PaymentOrderOut]:
    """The newest orders (in `state`, if given), newest first."""
    found = await desk.orders(raffle.payments(), state, limit)
    return [PaymentOrderOut.of(o) for o in found]


@router.get(
    "/api/admin/payments/orders/{out_trade_no}",
    tags=["operator"],
    responses=documented(401, 403, 404, 422, 503),
)
async def order_file(
    out_trade_no: OrderNo, session: AdminSession, raffle: RaffleDep
) -> OrderDetailOut:
    """An order with its history (every state change: when, from, to, why) and payments."""
    found = await desk.order_file(out_trade_no, raffle.payments())
    return OrderDetailOut(
        **PaymentOrderOut.of(found.order).model_dump(),
        user_id=found.order.user_id,
        history=[ChangeOut.of(c) for c in found.history],
        payments=[PaymentOut.of(p) for p in found.payments],
    )


@router.get(
    "/api/admin/payments/refunds", tags=["operator"], responses=documented(401, 403, 404, 422)
)
async def refunds(
    session: AdminSession,
    raffle: RaffleDep,
    state: PaymentState = PaymentState.REFUND_FAILED,
    limit: Limit = 50,
) -> list[PaymentOut]:
    """Payments being refunded, refunded, or whose refund failed for good (the default)."""
    return [PaymentOut.of(p) for p in await desk.refunds(raffle.payments(), state, limit)]


@router.post(
    "/api/admin/payments/orders/{out_trade_no}/payments/{trade_no}/refund",
    tags=["operator"],
    responses=documented(401, 403, 404, 409, 422, 503),
)
async def retry(
    out_trade_no: OrderNo, trade_no: TradeNo, session: AdminSession, raffle: RaffleDep
) -> PaymentOut:
    """Try a refund that failed for good once more (409 `refund_not_failed` otherwise)."""
    ctx = raffle.payments()
    await retry_refund(out_trade_no, trade_no, ctx, by=session.user_id)
    found = await desk.order_file(out_trade_no, ctx)
    return next(PaymentOut.of(p) for p in found.payments if p.trade_no == trade_no)


@router.post(
    "/api/admin/payments/reconciliation",
    tags=["operator"],
    responses=documented(401, 403, 404, 502, 503),
)
async def reconciliation(session: AdminSession, raffle: RaffleDep) -> ReconciliationOut:
    """Compare the newest orders with the gateway's records now: what disagrees."""
    return ReconciliationOut.of(await reconcile(raffle.payments()))
