"""The HTTP shapes of flash sales: operators' sales, players' page, challenge, path, answers."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from raffle.domain import flash_sales as rules
from raffle.domain.flash_gate import NONCE_MAX
from raffle.domain.flash_sales import Answer, Currency, Sale
from raffle.entrypoints.http.bounds import Id
from raffle.entrypoints.http.examples import Example, examples_of

SaleId = Id

SALE_IN: Example = {
    "id": 1111,
    "name": "限量保温杯",
    "price": 990,
    "currency": "cents",
    "stock": 100,
    "starts_at": "2026-11-11T12:00:00+08:00",
    "ends_at": "2026-11-11T13:00:00+08:00",
    "time_zone": "Asia/Shanghai",
    "original_price": 5900,
    "description": "One per person.",
    "image": "https://example.com/cup.png",
    "per_user": 1,
    "sku": None,
    "award_id": None,
}
SALE: Example = {k: v for k, v in SALE_IN.items() if k not in ("sku", "award_id")}
SALE_REVIEW: Example = {
    **SALE_IN,
    "left": 12,
    "orders": {"awaiting_payment": 30, "done": 58, "expired": 4},
}
CHALLENGE = "1794369600.16.9f86d081884c7d65.0f2c4b1e6a7d8c9b0a1f2e3d4c5b6a79"


class SaleIn(BaseModel):
    model_config = examples_of(SALE_IN) | ConfigDict(extra="forbid")

    id: SaleId
    name: Annotated[str, Field(max_length=rules.NAME_MAX)]
    price: int = Field(ge=0, le=rules.PRICE_MAX, description="In cents or in points.")
    currency: Currency
    stock: int = Field(ge=1, le=rules.STOCK_MAX)
    starts_at: AwareDatetime
    ends_at: AwareDatetime
    time_zone: Annotated[str, Field(max_length=64)] = "UTC"
    original_price: int | None = Field(None, ge=0, le=rules.PRICE_MAX)
    description: Annotated[str, Field(max_length=rules.DESCRIPTION_MAX)] = ""
    image: Annotated[str, Field(max_length=rules.IMAGE_MAX)] | None = None
    per_user: int = Field(1, ge=1, le=rules.PER_USER_MAX)
    sku: Id | None = Field(None, description="Sells this SKU's draw chances.")
    award_id: Id | None = Field(None, description="Sells this prize, delivered as won.")

    def to_sale(self) -> Sale:
        return Sale(**self.model_dump())


class SaleOut(BaseModel):
    """A sale as players see it: the page's countdown runs from the `Date` header."""

    model_config = examples_of(SALE)

    id: int
    name: str
    price: int
    currency: Currency
    original_price: int | None
    description: str
    image: str | None
    stock: int
    per_user: int
    starts_at: datetime
    ends_at: datetime
    time_zone: str

    @staticmethod
    def of(sale: Sale) -> SaleOut:
        return SaleOut(
            id=sale.id,
            name=sale.name,
            price=sale.price,
            currency=sale.currency,
            original_price=sale.original_price,
            description=sale.description,
            image=sale.image,
            stock=sale.stock,
            per_user=sale.per_user,
            starts_at=sale.starts_at,
            ends_at=sale.ends_at,
            time_zone=sale.time_zone,
        )


class SaleReviewOut(SaleOut):
    """A sale as operators review it: what the orders and the fast stock say."""

    model_config = examples_of(SALE_REVIEW)

    sku: int | None
    award_id: int | None
    left: int | None = Field(description="Units left in the fast stock; null: not loaded.")
    orders: dict[str, int] = Field(description="Orders by state (`refused`: none was left).")


class ChallengeOut(BaseModel):
    model_config = examples_of({"challenge": CHALLENGE, "difficulty": 16})

    challenge: str
    difficulty: int = Field(
        description="Find `answer` such that SHA-256(`challenge:answer`) starts with this "
        "many zero bits."
    )


class PathIn(BaseModel):
    model_config = examples_of({"challenge": CHALLENGE, "answer": "48213"}) | ConfigDict(
        extra="forbid"
    )

    challenge: Annotated[str, Field(max_length=128)]
    answer: Annotated[str, Field(min_length=1, max_length=NONCE_MAX)]


class PathOut(BaseModel):
    model_config = examples_of({"path": "1794369660-5d41402abc4b2a76b9719d911017c592"})

    path: str = Field(description="POST /api/flash-sales/{id}/{path}/purchase, while it lasts.")


class PurchaseOut(BaseModel):
    model_config = examples_of({"result": 0, "status": "queued"})

    result: int = Field(description="0 queued (poll the result), -1 sold out, 1 already bought.")
    status: str

    @staticmethod
    def of(answer: Answer) -> PurchaseOut:
        return PurchaseOut(result=int(answer), status=answer.name.lower())


class ResultOut(BaseModel):
    model_config = examples_of({"result": "fs1111-alice-1"})

    result: int | str = Field(description="-1 sold out, 0 queued (poll again), or the order id.")
