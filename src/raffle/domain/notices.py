"""Operators' notices: a prize's stock falling to its warning threshold, or running out."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from raffle.domain.strategy import StrategyPrize

NOTICE = "operator.notice"  # the outbox topic of notices; the relay hands it to the channel


class NoticeKind(StrEnum):
    STOCK_WARNING = "stock_warning"  # the stock left fell to the prize's warning_surplus
    STOCK_ZERO = "stock_zero"  # the last unit was taken


@dataclass(frozen=True, slots=True)
class StockNotice:
    """One crossing: the take that left `left` units of the prize."""

    kind: NoticeKind
    activity_id: int
    strategy_id: int
    award_id: int
    stock: int
    left: int
    warning_surplus: int | None
    order_id: str  # the draw whose take crossed


def crossed(prize: StrategyPrize, left: int) -> tuple[NoticeKind, ...]:
    """What a take that left `left` units of `prize` crossed. A take lowers the stock left by
    exactly one, so of the takes that pass a threshold exactly one lands on it: the crossing.
    A unit given back lifts the stock above it again, and the next take to land crosses anew."""
    kinds: list[NoticeKind] = []
    if prize.warning_surplus is not None and left == prize.warning_surplus:
        kinds.append(NoticeKind.STOCK_WARNING)
    if prize.stock is not None and left == 0:
        kinds.append(NoticeKind.STOCK_ZERO)
    return tuple(kinds)


def still_crossed(prize: StrategyPrize, kind: NoticeKind, left: int | None) -> bool:
    """Whether a crossing whose draw did not commit stands after its unit was given back and
    the stock has `left` (None: the unit could not be given back). It stands while the stock
    is still at or below the threshold: other draws took past it meanwhile, and no take will
    land on it again unless the stock rises above it."""
    threshold = prize.warning_surplus if kind is NoticeKind.STOCK_WARNING else 0
    return threshold is not None and (left is None or left <= threshold)


def warned(prize: StrategyPrize, left: int | None) -> bool:
    """Whether the console shows the prize's warning badge: stock at or below the threshold."""
    return prize.warning_surplus is not None and left is not None and left <= prize.warning_surplus
