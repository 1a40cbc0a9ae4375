"""The HTTP shapes of prize effects: codes and pools, access grants, shipments."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from raffle.domain.awards import AwardKind
from raffle.domain.fulfilment import (
    CODE_MAX,
    MAX_CODES_PER_IMPORT,
    Address,
    PoolStats,
    Shipment,
)
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.bounds import UserId
from raffle.entrypoints.http.examples import examples_of
from raffle.service.wins import WonPrize


class AddressBody(BaseModel):
    """A shipping address; the limits are checked field by field (`invalid_address`)."""

    model_config = examples_of(examples.ADDRESS)

    name: str = Field(max_length=1000, description="The recipient.", examples=["张三"])
    phone: str = Field(max_length=1000, examples=["138 0013 8000"])
    region: str = Field(max_length=1000, description="Province, city, district.")
    line: str = Field(max_length=1000, description="Street, building, flat.")
    postcode: str = Field("", max_length=1000)

    @classmethod
    def of(cls, a: Address) -> AddressBody:
        return cls(name=a.name, phone=a.phone, region=a.region, line=a.line, postcode=a.postcode)

    def to_address(self) -> Address:
        return Address(self.name, self.phone, self.region, self.line, self.postcode)


class ShipmentOut(BaseModel):
    model_config = examples_of(examples.SHIPMENT)

    order_id: str
    user_id: str
    award_id: int
    state: str = Field(description="awaiting_address, ready (addressed) or shipped.")
    address: AddressBody | None
    tracking: str | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, s: Shipment) -> ShipmentOut:
        return cls(
            order_id=s.order_id, user_id=s.user_id, award_id=s.award_id, state=s.state.value,
            address=AddressBody.of(s.address) if s.address else None, tracking=s.tracking,
            created_at=s.created_at, updated_at=s.updated_at,
        )  # fmt: skip


class ShipmentsOut(BaseModel):
    model_config = examples_of(examples.SHIPMENTS)

    shipments: list[ShipmentOut]
    next: str | None = Field(description="Pass as `after` for the next page; null at the end.")


class ShipIn(BaseModel):
    model_config = examples_of(examples.SHIP_IN)

    user_id: UserId = Field(description="The winner (see the list).")
    tracking: str | None = Field(None, max_length=64, description="The carrier's number.")


class DeliveryOut(BaseModel):
    """What the prize's delivery left, by kind; null for points, chances and thanks."""

    model_config = examples_of(examples.DELIVERY)

    coupon_code: str | None = Field(description="coupon: the code, once handed out.")
    content_id: str | None = Field(description="content: the content opened.")
    shipment: ShipmentOut | None = Field(
        description="physical: null until delivery (or the player's address) opens it."
    )

    @classmethod
    def of(cls, p: WonPrize) -> DeliveryOut | None:
        kind = p.award.kind
        if kind not in (AwardKind.COUPON, AwardKind.CONTENT, AwardKind.PHYSICAL):
            return None
        return cls(
            coupon_code=p.coupon_code,
            content_id=p.award.config if kind is AwardKind.CONTENT else None,
            shipment=ShipmentOut.of(p.shipment) if p.shipment else None,
        )


class CodesIn(BaseModel):
    model_config = examples_of(examples.CODES_IN)

    codes: list[Annotated[str, Field(max_length=CODE_MAX)]] = Field(
        min_length=1, max_length=MAX_CODES_PER_IMPORT
    )


class PoolOut(BaseModel):
    model_config = examples_of(examples.POOL)

    pool: str
    total: int
    handed: int
    free: int

    @classmethod
    def of(cls, p: PoolStats) -> PoolOut:
        return cls(pool=p.name, total=p.total, handed=p.handed, free=p.free)


class ImportOut(BaseModel):
    model_config = examples_of(examples.IMPORTED)

    added: int = Field(description="Codes new to the pool; ones it held are skipped.")
    pool: PoolOut
