"""A campaign file's flash sales: their items read and written (campaign_file, campaign_writer)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from raffle.domain import flash_sales as rules
from raffle.domain.errors import InvalidConfig
from raffle.domain.flash_sales import Currency, InvalidSale, Sale


class FlashSaleFileIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[int, Field(ge=1, lt=2**63)]
    name: Annotated[str, Field(max_length=rules.NAME_MAX)]
    price: Annotated[int, Field(ge=0, le=rules.PRICE_MAX)]
    currency: Currency
    stock: Annotated[int, Field(ge=1, le=rules.STOCK_MAX)]
    starts_at: AwareDatetime
    ends_at: AwareDatetime
    time_zone: Annotated[str, Field(max_length=64)] = "UTC"
    original_price: Annotated[int, Field(ge=0, le=rules.PRICE_MAX)] | None = None
    description: Annotated[str, Field(max_length=rules.DESCRIPTION_MAX)] = ""
    image: Annotated[str, Field(max_length=rules.IMAGE_MAX)] | None = None
    per_user: Annotated[int, Field(ge=1, le=rules.PER_USER_MAX)] = 1
    sku: Annotated[int, Field(ge=1, lt=2**63)] | None = None
    award_id: Annotated[int, Field(ge=1, lt=2**63)] | None = None


def declared(s: FlashSaleFileIn) -> Sale:
    """The item as a sale; its first problem as InvalidConfig at its field."""
    try:
        return Sale(**s.model_dump())
    except InvalidSale as error:
        field, message = error.problems[0]
        raise InvalidConfig(message, (field,)) from None


def written(sale: Sale) -> dict[str, Any]:
    """The item in the file's shape, fields at their defaults left out."""
    item: dict[str, Any] = {
        "id": sale.id,
        "name": sale.name,
        "price": sale.price,
        "currency": sale.currency.value,
        "stock": sale.stock,
        "starts_at": sale.starts_at,
        "ends_at": sale.ends_at,
    }
    optional: dict[str, object] = {
        "time_zone": sale.time_zone if sale.time_zone != "UTC" else None,
        "original_price": sale.original_price,
        "description": sale.description,
        "image": sale.image,
        "per_user": sale.per_user if sale.per_user != 1 else None,
        "sku": sale.sku,
        "award_id": sale.award_id,
    }
    return item | {k: v for k, v in optional.items() if v is not None and v != ""}
