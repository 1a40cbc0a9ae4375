"""The console's warning badges: an activity's prizes with a threshold and their stock left."""

from __future__ import annotations

from dataclasses import dataclass

from raffle.domain.notices import warned
from raffle.service.catalogue import Catalogue
from raffle.service.ports import PrizeStock


@dataclass(frozen=True, slots=True)
class PrizeWarning:
    award_id: int
    title: str
    stock: int
    left: int | None  # None: the counter is not loaded yet (no draw since the start)
    warning_surplus: int
    warned: bool  # at or below the threshold: the badge shows


async def stock_warnings(
    activity_id: int, *, catalogue: Catalogue, stock: PrizeStock
) -> list[PrizeWarning]:
    """The activity's prizes that have a warning threshold, in the strategy's order."""
    activity = await catalogue.activity(activity_id)
    strategy = (await catalogue.engine(activity)).strategy
    awards = await catalogue.awards()
    found = []
    for prize in strategy.prizes:
        if prize.stock is None or prize.warning_surplus is None:
            continue
        left = await stock.left(strategy.id, prize.award_id)
        found.append(
            PrizeWarning(
                prize.award_id,
                awards[prize.award_id].title,
                prize.stock,
                left,
                prize.warning_surplus,
                warned(prize, left),
            )
        )
    return found
