"""Flash sales: operators create and review them; players ask for a path (the purchase
through it: routes/flash_purchase.py)."""

from __future__ import annotations

import hashlib
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from raffle.domain.flash_sales import Answer
from raffle.entrypoints.http.bounds import ID_LIMIT
from raffle.entrypoints.http.deps import AdminSession, CurrentSession, RaffleDep, client_ip
from raffle.entrypoints.http.flash_schemas import (
    ChallengeOut,
    PathIn,
    PathOut,
    ResultOut,
    SaleIn,
    SaleOut,
    SaleReviewOut,
)
from raffle.entrypoints.http.payment_schemas import PaymentOrderOut
from raffle.entrypoints.http.problems import documented
from raffle.service.flash_payments import pay

router = APIRouter()

SaleIdPath = Annotated[int, Path(ge=1, lt=ID_LIMIT, examples=[1111])]
CACHED = "public, max-age=1, must-revalidate"


@router.get(
    "/api/flash-sales/{sale_id}",
    tags=["player"],
    response_model=SaleOut,
    responses={
        304: {"description": "Not modified: the page the client holds."},
        **documented(404, 422),
    },
)
async def page(sale_id: SaleIdPath, request: Request, raffle: RaffleDep) -> Response:
    """The sale's page, from this process's memory, with an ETag: a countdown polling it
    costs no database read, and an unchanged page answers 304."""
    sale = await raffle.flash.sale(sale_id)
    body = SaleOut.of(sale).model_dump_json().encode()
    tag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
    headers = {"ETag": tag, "Cache-Control": CACHED}
    if tag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


@router.post(
    "/api/flash-sales/{sale_id}/challenge", tags=["player"], responses=documented(401, 404, 422)
)
async def challenge(
    sale_id: SaleIdPath, session: CurrentSession, raffle: RaffleDep
) -> ChallengeOut:
    """A proof-of-work challenge for a purchase path (hashcash-style, SHA-256)."""
    found = await raffle.flash.challenge(sale_id, session.user_id)
    return ChallengeOut(challenge=found, difficulty=raffle.flash.gate.difficulty)


@router.post(
    "/api/flash-sales/{sale_id}/path",
    tags=["player"],
    responses=documented(401, 403, 404, 409, 422, 429),
)
async def path(
    sale_id: SaleIdPath, body: PathIn, request: Request, session: CurrentSession, raffle: RaffleDep
) -> PathOut:
    """My purchase path, short-lived, once the challenge is answered (403 `wrong_answer`,
    `challenge_expired`); 409 `sale_not_open` outside the sale's time."""
    found = await raffle.flash.path(
        sale_id, session.user_id, body.challenge, body.answer, client_ip(request)
    )
    return PathOut(path=found)


@router.get(
    "/api/flash-sales/{sale_id}/result", tags=["player"], responses=documented(401, 404, 422)
)
async def result(sale_id: SaleIdPath, session: CurrentSession, raffle: RaffleDep) -> ResultOut:
    """-1 sold out, 0 queued (poll again), or my order's id."""
    found = await raffle.flash.result(sale_id, session.user_id)
    return ResultOut(result=int(found) if isinstance(found, Answer) else found)


@router.post(
    "/api/flash-sales/{sale_id}/payment",
    tags=["player"],
    response_model=PaymentOrderOut,
    responses=documented(401, 404, 409, 422),
)
async def payment(
    sale_id: SaleIdPath, session: CurrentSession, raffle: RaffleDep
) -> PaymentOrderOut:
    """The payment order of my order waiting for payment (409 `nothing_to_pay`): its QR is
    the payment orders' (`GET /api/payments/orders/{out_trade_no}/qr`)."""
    made = await pay(session.user_id, sale_id, raffle.flash, raffle.payments())
    return PaymentOrderOut.of(made)


@router.post(
    "/api/admin/flash-sales",
    tags=["operator"],
    status_code=201,
    responses=documented(401, 403, 409, 422),
)
async def create(body: SaleIn, session: AdminSession, raffle: RaffleDep) -> SaleOut:
    """A new sale (409 `sale_exists`), its stock loaded into the fast stock at once."""
    return SaleOut.of(await raffle.flash.create(body.to_sale()))


@router.get("/api/admin/flash-sales", tags=["operator"], responses=documented(401, 403))
async def listed(session: AdminSession, raffle: RaffleDep) -> list[SaleReviewOut]:
    return [await _review(raffle, sale.id) for sale in await raffle.flash.store.all()]


@router.get(
    "/api/admin/flash-sales/{sale_id}", tags=["operator"], responses=documented(401, 403, 404)
)
async def review(sale_id: SaleIdPath, session: AdminSession, raffle: RaffleDep) -> SaleReviewOut:
    return await _review(raffle, sale_id)


async def _review(raffle: RaffleDep, sale_id: int) -> SaleReviewOut:
    flash = raffle.flash
    sale = await flash.sale(sale_id)
    return SaleReviewOut(
        **SaleOut.of(sale).model_dump(),
        sku=sale.sku,
        award_id=sale.award_id,
        left=await flash.stock.left(sale_id),
        orders=await flash.store.counts(sale_id),
    )
