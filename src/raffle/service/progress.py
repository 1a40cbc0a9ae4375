"""A player's view of an activity's prizes: what is locked, for how many more draws."""

from __future__ import annotations

from dataclasses import dataclass

from raffle.domain.quota import QuotaAccount
from raffle.service.activities import PublishedOdds, PublishedPrize, published_odds
from raffle.service.catalogue import Catalogue
from raffle.service.ports import ChanceHints, Clock, PrizeStock, Shards
from raffle.service.quotas import my_account


@dataclass(frozen=True, slots=True)
class PrizeProgress:
    prize: PublishedPrize
    draws_to_unlock: int  # draws to make before the one that can win it; 0: the next can


@dataclass(frozen=True, slots=True)
class TierProgress:
    threshold: int  # the draw count from which only this tier's prizes are drawn
    award_ids: tuple[int, ...]
    draws_to_reach: int  # 0: the next draw is in this tier (or beyond)


@dataclass(frozen=True, slots=True)
class MyPrizes:
    account: QuotaAccount
    odds: PublishedOdds
    prizes: tuple[PrizeProgress, ...]
    tiers: tuple[TierProgress, ...]


async def my_prizes(
    user_id: str,
    activity_id: int,
    *,
    catalogue: Catalogue,
    shards: Shards,
    stock: PrizeStock,
    clock: Clock,
    hints: ChanceHints,
) -> MyPrizes:
    """Counts are of draws *including* the next one: with 2 draws made and `lock: 3`, the
    next draw can win the prize, so nothing is left to unlock."""
    account = await my_account(
        user_id, activity_id, catalogue=catalogue, shards=shards, clock=clock, hints=hints
    )
    odds = await published_odds(activity_id, catalogue=catalogue, stock=stock)
    upcoming = account.draws + 1
    prizes = tuple(PrizeProgress(p, max(0, (p.lock_after or 0) - upcoming)) for p in odds.prizes)
    tiers = tuple(
        TierProgress(t, tuple(sorted(pool)), max(0, t - upcoming))
        for t, pool in sorted(odds.weight_tiers.items())
    )
    return MyPrizes(account, odds, prizes, tiers)
