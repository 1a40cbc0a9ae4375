"""The HTTP shapes of points, rebates and sign-in."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, Field

from raffle.domain.points import PointsAccount, PointsOrder
from raffle.domain.rebates import RebateOrder
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.bounds import Id, UserId
from raffle.entrypoints.http.examples import examples_of
from raffle.entrypoints.http.schemas import AccountOut
from raffle.service.shop import ShopItem


class PointsOrderOut(BaseModel):
    model_config = examples_of(examples.POINTS_ORDER)

    order_id: str
    kind: str = Field(description="earn or spend")
    amount: int = Field(description="Always positive; `kind` says which way.")
    out_business_no: str
    reason: str
    created_at: datetime

    @classmethod
    def of(cls, o: PointsOrder) -> PointsOrderOut:
        return cls(
            order_id=o.order_id, kind=o.kind.value, amount=o.amount,
            out_business_no=o.out_business_no, reason=o.reason, created_at=o.created_at,
        )  # fmt: skip


class BalanceOut(BaseModel):
    model_config = examples_of(examples.BALANCE)

    total: int = Field(description="Every point ever earned.")
    available: int = Field(description="What can be spent now; never negative.")

    @classmethod
    def of(cls, a: PointsAccount) -> BalanceOut:
        return cls(total=a.total, available=a.available)


class PointsOut(BaseModel):
    model_config = examples_of(examples.POINTS)

    balance: BalanceOut
    orders: list[PointsOrderOut] = Field(description="Newest first.")
    next: str | None = Field(description="Pass as `before` for the next page; null at the end.")


class ExchangeIn(BaseModel):
    model_config = examples_of(examples.EXCHANGE_IN)

    sku: Id = Field(description="The SKU whose chances are bought at its points price.")


class ExchangeOut(BaseModel):
    model_config = examples_of(examples.EXCHANGE)

    exchanged: bool = Field(
        description="False: this Idempotency-Key was exchanged before; nothing changed now."
    )
    order: PointsOrderOut
    balance: BalanceOut
    account: AccountOut


class RebateOut(BaseModel):
    model_config = examples_of(examples.REBATE)

    order_id: str
    activity_id: int
    behaviour: str
    business_key: str
    sku: int | None = Field(description="The SKU whose chances were credited, if any.")
    points: int | None = Field(description="The points earned, if any.")
    created_at: datetime

    @classmethod
    def of(cls, r: RebateOrder) -> RebateOut:
        return cls(
            order_id=r.order_id, activity_id=r.activity_id, behaviour=r.behaviour,
            business_key=r.business_key, sku=r.sku, points=r.points, created_at=r.created_at,
        )  # fmt: skip


class SignInOut(BaseModel):
    model_config = examples_of(examples.SIGN_IN)

    granted: bool = Field(description="False: already signed in today; nothing granted again.")
    day: date = Field(description="Today in the activity's time zone.")
    streak: int = Field(description="Consecutive days signed in, up to today.")
    rebate: RebateOut


class SignInsOut(BaseModel):
    model_config = examples_of(examples.SIGN_INS)

    month: str = Field(examples=["2026-11"])
    days: list[int] = Field(description="The days of the month signed in, ascending.")
    today: date
    signed_today: bool
    streak: int = Field(
        description="Consecutive days signed in up to today (up to yesterday while today is "
        "not signed yet)."
    )


class BehaviourIn(BaseModel):
    model_config = examples_of(examples.BEHAVIOUR_IN)

    user_id: UserId
    activity_id: Id
    behaviour: str = Field(min_length=1, max_length=32, examples=["share"])
    business_key: str = Field(
        min_length=1, max_length=64, description="What makes two reports one, e.g. a payment id."
    )


class BehaviourOut(BaseModel):
    model_config = examples_of(examples.BEHAVIOUR)

    granted: bool = Field(description="False: rebated before under this business key.")
    rebate: RebateOut


class SkuOut(BaseModel):
    """A SKU on sale: the chances its pack adds, its price in points, its stock left."""

    model_config = examples_of(examples.SKU)

    sku: int
    activity_id: int
    total: int = Field(description="Chances the pack adds in all.")
    day: int = Field(description="What it adds to each day's allowance.")
    month: int = Field(description="What it adds to each month's allowance.")
    price_points: int
    stock: int
    stock_left: int

    @classmethod
    def of(cls, i: ShopItem) -> SkuOut:
        s, p = i.sku, i.pack
        return cls(
            sku=s.sku, activity_id=s.activity_id, total=p.total, day=p.day, month=p.month,
            price_points=s.price_points, stock=s.stock, stock_left=i.stock_left,
        )  # fmt: skip
