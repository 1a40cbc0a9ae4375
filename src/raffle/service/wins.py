"""My wins: each draw's award record with its delivery state and, per kind, what it left
behind (the coupon code, the shipment), a page at a time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from raffle.domain.awards import Award, AwardKind
from raffle.domain.draws import RaffleOrder, Win
from raffle.domain.fulfilment import Shipment
from raffle.domain.prize_cards import PrizeCard
from raffle.domain.prize_claims import CLAIMED_KINDS, ClaimState
from raffle.service.catalogue import Catalogue
from raffle.service.ports import Clock, Shards, UnitOfWork
from raffle.service.ports.audiences import Profiles
from raffle.service.prize_claims import ClaimStatus, statuses


@dataclass(frozen=True, slots=True)
class WonPrize:
    order: RaffleOrder
    win: Win
    award: Award
    coupon_code: str | None = None  # None too while a claim is owed (`claim`)
    shipment: Shipment | None = None
    claim: ClaimStatus | None = None  # None: the prize has no claim terms
    card: PrizeCard | None = None  # the prize's card in its activity; None for the fallback


@dataclass(frozen=True, slots=True)
class WinsPage:
    prizes: list[WonPrize]
    next: str | None  # the `before` of the next page; None at the end


async def my_wins(
    user_id: str,
    activity_id: int | None,
    before: str | None,
    limit: int,
    *,
    catalogue: Catalogue,
    shards: Shards,
    config: Callable[[], UnitOfWork],
    profiles: Profiles,
    clock: Clock,
) -> WinsPage:
    """My draws in an activity (in every activity if None), newest first, older than order
    id `before`. Codes come from the configuration database, in a transaction after the
    shard's (never inside it: on SQLite both are one database with one writer). A prize with
    claim terms carries its claim's status, and its code only once claimed."""
    awards = await catalogue.awards()
    async with shards.for_user(user_id) as uow:
        rows = await uow.orders.history(user_id, activity_id, before, limit + 1)
        page = rows[:limit]
        shipped = [o.order_id for o, w in page if awards[w.award_id].kind is AwardKind.PHYSICAL]
        shipments = await uow.shipments.for_orders(shipped)
        claimable = [o.order_id for o, w in page if awards[w.award_id].kind in CLAIMED_KINDS]
        stored = await uow.prize_claims.states(claimable)
    won = [(w, awards[w.award_id]) for _, w in page]
    claims = await statuses(won, stored, await profiles.of(user_id), clock.now(), catalogue)
    coupons = [o.order_id for o, w in page if awards[w.award_id].kind is AwardKind.COUPON]
    codes: dict[str, str] = {}
    if coupons:
        async with config() as cfg:
            codes = await cfg.code_pools.for_orders(coupons)
    cards = await _cards(catalogue, page)
    prizes = [
        WonPrize(
            o,
            w,
            awards[w.award_id],
            _shown(codes.get(o.order_id), claims.get(o.order_id)),
            shipments.get(o.order_id),
            claims.get(o.order_id),
            cards.get((o.activity_id, w.award_id)),
        )
        for o, w in page
    ]  # fmt: skip
    return WinsPage(prizes, page[-1][0].order_id if len(rows) > limit else None)


def _shown(code: str | None, claim: ClaimStatus | None) -> str | None:
    """A code is the prize itself: shown once claimed, or at once if its prize has no terms."""
    return code if claim is None or claim.state is ClaimState.CLAIMED else None


async def _cards(
    catalogue: Catalogue, page: Sequence[tuple[RaffleOrder, Win]]
) -> dict[tuple[int, int], PrizeCard]:
    """The card of each prize won on the page, by activity and award (from the cache)."""
    found = {}
    for activity_id in {o.activity_id for o, _ in page}:
        engine = await catalogue.engine(await catalogue.activity(activity_id))
        for prize in engine.strategy.prizes:
            found[activity_id, prize.award_id] = prize.card
    return found
