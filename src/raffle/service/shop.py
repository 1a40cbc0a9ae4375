"""The SKUs of an activity a player can buy with points: what each adds, costs and has left."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from raffle.domain.quota import QuotaPack, Sku
from raffle.service.catalogue import Catalogue
from raffle.service.ports import UnitOfWork


@dataclass(frozen=True, slots=True)
class ShopItem:
    sku: Sku
    pack: QuotaPack
    stock_left: int


async def shop(
    activity_id: int, *, catalogue: Catalogue, config: Callable[[], UnitOfWork]
) -> list[ShopItem]:
    """The activity's SKUs in id order, with their packs and the stock left now (read fresh,
    not cached: it is what the player is about to spend points on)."""
    await catalogue.activity(activity_id)  # an unknown activity is a 404, not an empty shop
    async with config() as uow:
        skus = await uow.skus.for_activity(activity_id)
        left = [await uow.skus.stock_left(s.sku) for s in skus]
    return [
        ShopItem(s, await catalogue.pack(s.pack_id), n) for s, n in zip(skus, left, strict=True)
    ]
