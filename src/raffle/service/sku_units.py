"""A unit of a SKU's stock held while the user's shard transaction credits it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

from raffle.domain.quota import SkuSoldOut
from raffle.service.ports import UnitOfWork


class Hold:
    def __init__(self) -> None:
        self.kept = False

    def keep(self) -> None:
        """The credit committed: the unit stays sold."""
        self.kept = True


@contextlib.asynccontextmanager
async def held_unit(config: Callable[[], UnitOfWork], sku: int | None) -> AsyncIterator[Hold]:
    """Take one unit of `sku` (None: nothing to take) for the block, and give it back
    unless the block called `keep()`.

    The stock lives in the configuration database and the credit in the user's shard, so
    they are two transactions, as in `quotas.top_up`: taken first, guarded, never below
    zero; given back when the credit does not commit or turns out to be a repeat.
    """
    hold = Hold()
    if sku is None:
        yield hold
        return
    async with config() as cfg:
        if not await cfg.skus.take(sku):
            raise SkuSoldOut(f"SKU {sku} is sold out")
        await cfg.commit()
    try:
        yield hold
    finally:
        if not hold.kept:
            async with config() as cfg:
                await cfg.skus.give_back(sku)
                await cfg.commit()
