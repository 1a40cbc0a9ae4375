"""Units stranded in the fast stock (taken, then neither ordered nor refused) given back."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from raffle.domain.flash_sales import LIVE, Purchase, Sale
from raffle.service.flash_sales import FlashSales
from raffle.service.ports.flash_sales import Holding


@dataclass(slots=True)
class Strays:
    """What the last rounds saw: per sale and user holding more units in the fast stock
    than orders, that holding and since when it stood unchanged (None: looked at, and no
    unit of it was stranded)."""

    seen: dict[tuple[int, str], tuple[Holding, datetime | None]] = field(default_factory=dict)


async def reconcile(sales: FlashSales, strays: Strays) -> int:
    """Give back the units a user holds in the fast stock under seqs no order or refusal
    carries, once their holding stood unchanged for `limits.stray`: a purchase taken
    whose publish failed without its unit coming back (a crash between the take and the
    publish, or a publish answered 503 whose message never arrived). Each give-back is
    conditional on the count still being the one seen, so a take or another process's
    reconciliation meanwhile changes nothing; units back clear the sold-out marks. How
    many units came back."""
    now, returned = sales.clock.now(), 0
    still: dict[tuple[int, str], tuple[Holding, datetime | None]] = {}
    for sale in await sales.store.all():
        if sale.ends_at <= now or (fast := await sales.stock.holders(sale.id)) is None:
            continue
        _, ordered = await sales.store.holders(sale.id)
        for user, holding in fast.items():
            if holding.held <= ordered.get(user, Holding(0, 0)).held:
                continue  # each unit held has its order
            key = (sale.id, user)
            first = strays.seen.get(key)
            if first is None or first[0] != holding:
                still[key] = (holding, now)
            elif first[1] is None or now - first[1] < sales.limits.stray:
                still[key] = first
            else:
                # Only a take strands a unit, and a take moves the holding: while it stands,
                # this one needs no second look.
                still[key] = (holding, None)
                returned += await _give_back(sales, sale, user, holding)
    strays.seen = still
    if returned:
        await sales.came_back()
    return returned


async def _give_back(sales: FlashSales, sale: Sale, user: str, holding: Holding) -> int:
    """The user's units held beyond their live orders, no more than their seqs that no row
    carries: any seq may be stranded, not only those above the last row (with `per_user`
    above 1 a later purchase may be ordered first). Those seqs are then stored as refused,
    so a purchase arriving after all is refused rather than ordered a second time, and its
    result reads -1. A seq without a row whose unit came back before (a publish answered
    503) is stored as refused too: its player was told so."""
    rows = await sales.store.of_user(sale.id, user)
    recorded = {row.seq for row in rows}
    missing = [seq for seq in range(1, holding.seq + 1) if seq not in recorded]
    units = min(holding.held - sum(row.state in LIVE for row in rows), len(missing))
    if units <= 0 or not await sales.stock.give_back_stray(sale.id, user, holding, units):
        return 0
    # Refused after the give-back, not before: refusals stored, then a give-back turned down
    # for a moved count, would strand the unit with no seq left to find it by.
    at = sales.clock.now()
    for seq in missing:
        await sales.store.refuse(Purchase(sale.id, user, seq, at), sale)
    return units
