"""Reconciliation of an activity's deliveries: per prize, award records by state against
delivered effects and the prize's stock."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from raffle.domain.draws import WinState
from raffle.service.catalogue import Catalogue
from raffle.service.ports import Shards


@dataclass(frozen=True, slots=True)
class PrizeDeliveries:
    award_id: int
    kind: str
    stock: int | None  # None: unlimited (or the fallback)
    records: int  # award rows: what was won
    created: int  # not delivered yet
    completed: int
    failed: int  # dead-lettered, waiting for an operator
    delivered: int  # delivery rows (effects written)

    @property
    def consistent(self) -> bool:
        """Every completed record has its one effect, and no more was won than stocked."""
        within_stock = self.stock is None or self.records <= self.stock
        return self.completed == self.delivered and within_stock


async def delivery_report(
    activity_id: int, *, catalogue: Catalogue, shards: Shards
) -> list[PrizeDeliveries]:
    """The activity's prizes (and its fallback) that were won, over every shard."""
    activity = await catalogue.activity(activity_id)
    strategy = (await catalogue.engine(activity)).strategy
    awards = await catalogue.awards()
    stocks = {p.award_id: p.stock for p in strategy.prizes}
    records: Counter[tuple[int, WinState]] = Counter()
    delivered: Counter[int] = Counter()
    for uow in shards.every():
        async with uow:
            records.update(await uow.wins.tally(activity_id))
            delivered.update(await uow.deliveries.tally(activity_id))
    won = sorted({award for award, _ in records} | set(delivered))
    return [
        PrizeDeliveries(
            award_id=award,
            kind=awards[award].kind.value if award in awards else "unknown",
            stock=stocks.get(award),
            records=sum(n for (a, _), n in records.items() if a == award),
            created=records[award, WinState.CREATE],
            completed=records[award, WinState.COMPLETED],
            failed=records[award, WinState.FAILED],
            delivered=delivered[award],
        )
        for award in won
    ]
