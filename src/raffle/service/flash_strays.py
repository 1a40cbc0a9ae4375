"""Units stranded in the fast stock (taken, then neither ordered nor refused) given back."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from raffle.service.flash_sales import FlashSales
from raffle.service.ports.flash_sales import Holding


@dataclass(slots=True)
class Strays:
    """What the last rounds saw: per sale and user, the fast stock's count that no order
    accounted for, and since when it stood unchanged."""

    seen: dict[tuple[int, str], tuple[Holding, datetime]] = field(default_factory=dict)


async def reconcile(sales: FlashSales, strays: Strays) -> int:
    """Give back the units a user holds in the fast stock under a seq no order or refusal
    carries, once that picture stood unchanged for `limits.stray`: a
    purchase taken whose publish failed without its unit coming back (a crash between the
    take and the publish, or a publish answered 503 whose message never arrived). Each
    give-back is conditional on the count still being the one seen, so a take or another
    process's reconciliation meanwhile changes nothing; units back clear the sold-out
    marks. A message that arrives later still is ordered only if the database has a unit
    left for it: never more than the stock. How many units came back."""
    now, returned, still = sales.clock.now(), 0, {}
    for sale in await sales.store.all():
        if sale.ends_at <= now or (fast := await sales.stock.holders(sale.id)) is None:
            continue
        _, ordered = await sales.store.holders(sale.id)
        for user, holding in fast.items():
            mine = ordered.get(user, Holding(0, 0))
            units = min(holding.held - mine.held, holding.seq - mine.seq)
            if units <= 0:
                continue
            key = (sale.id, user)
            first = strays.seen.get(key)
            if first is None or first[0] != holding:
                still[key] = (holding, now)
            elif now - first[1] < sales.limits.stray:
                still[key] = first
            elif await sales.stock.give_back_stray(sale.id, user, holding, units):
                returned += units
    strays.seen = still
    if returned:
        await sales.came_back()
    return returned
