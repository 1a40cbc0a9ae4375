"""Claiming won prizes: the terms checked, each prize's claim state, the expiry job."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from raffle.domain.activity import FROZEN
from raffle.domain.awards import Award, AwardKind
from raffle.domain.draws import Win
from raffle.domain.fulfilment import PrizeNotFound
from raffle.domain.prize_claims import (
    CLAIMED_KINDS,
    NO_TERMS,
    ClaimState,
    ClaimTerms,
    PrizeExpired,
    Window,
    check_claim,
    claim_state,
)
from raffle.domain.profiles import Profile
from raffle.service.catalogue import Catalogue
from raffle.service.ports import Clock, Shards, ShardUnitOfWork, UnitOfWork
from raffle.service.ports.audiences import Profiles

ALWAYS = Window(None, None)
IN_FLIGHT = timedelta(minutes=5)  # longer than any draw takes from its clock reading to commit


@dataclass(frozen=True, slots=True)
class ClaimStatus:
    """Where my won prize stands: its terms, when it may be claimed, and what is missing."""

    terms: ClaimTerms
    window: Window
    state: ClaimState
    missing: tuple[str, ...] = ()


async def terms_of(win: Win, catalogue: Catalogue) -> tuple[ClaimTerms, Window]:
    """The terms of the won prize, as its activity's strategy says (frozen once it ran), and
    the window they give it."""
    activity = await catalogue.activity(win.activity_id)
    strategy = (await catalogue.engine(activity)).strategy
    prize = strategy.prize(win.award_id) if strategy.id == win.strategy_id else None
    terms = NO_TERMS if prize is None else prize.claim
    if terms.validity is None:
        return terms, ALWAYS
    return terms, terms.validity.window(win.created_at, activity.end_at, activity.time_zone)


async def statuses(
    wins: Sequence[tuple[Win, Award]],
    stored: dict[str, ClaimState],
    profile: Profile,
    now: datetime,
    catalogue: Catalogue,
) -> dict[str, ClaimStatus]:
    """The claim status of each won prize that has terms, by order id."""
    found = {}
    for win, award in wins:
        if award.kind not in CLAIMED_KINDS:
            continue
        terms, window = await terms_of(win, catalogue)
        if not terms.any:
            continue
        state = claim_state(stored.get(win.order_id), window, now)
        missing = tuple(terms.missing(profile)) if state is ClaimState.OPEN else ()
        found[win.order_id] = ClaimStatus(terms, window, state, missing)
    return found


async def admit(
    user_id: str,
    order_id: str,
    kind: AwardKind,
    *,
    catalogue: Catalogue,
    shards: Shards,
    profiles: Profiles,
    clock: Clock,
) -> bool:
    """Check that my order `order_id` won a prize of `kind` I may claim now: refused when it
    expired, is not valid yet, or my profile misses a condition. Whether a claim is to be
    recorded (`record_claim`): not for a prize without terms, nor one claimed before."""
    awards = await catalogue.awards()
    async with shards.for_user(user_id) as uow:
        win = await uow.wins.get(order_id)
        stored = (await uow.prize_claims.states([order_id])).get(order_id)
    win, _ = my_prize(win, awards, user_id, order_id, kind)
    terms, window = await terms_of(win, catalogue)
    if not terms.any or stored is ClaimState.CLAIMED:
        return False
    state = claim_state(stored, window, clock.now())
    check_claim(terms, state, await profiles.of(user_id), window)
    return True


def my_prize(
    win: Win | None, awards: Mapping[int, Award], user_id: str, order_id: str, kind: AwardKind
) -> tuple[Win, Award]:
    """The user's win of order `order_id` and its award, a prize of `kind`; PrizeNotFound
    otherwise (another user's order reads as a missing one: no IDOR)."""
    award = awards.get(win.award_id) if win is not None else None
    if win is None or win.user_id != user_id or award is None:
        raise PrizeNotFound(f"you have no prize with order {order_id}")
    if award.kind is not kind:
        raise PrizeNotFound(f"the prize of order {order_id} is not a {kind.value} prize")
    return win, award


async def record_claim(uow: ShardUnitOfWork, user_id: str, order_id: str, at: datetime) -> None:
    """Record the claim in the caller's transaction; refused if the expiry job marked the
    prize expired since it was admitted (the first written of the two stands)."""
    if await uow.prize_claims.record(order_id, user_id, ClaimState.CLAIMED, at):
        return
    if (await uow.prize_claims.states([order_id])).get(order_id) is ClaimState.EXPIRED:
        raise PrizeExpired("the prize expired while it was being claimed")


async def claim_code(
    user_id: str,
    order_id: str,
    *,
    catalogue: Catalogue,
    shards: Shards,
    profiles: Profiles,
    config: Callable[[], UnitOfWork],
    clock: Clock,
) -> str | None:
    """Claim my coupon prize and read its code (None until its delivery handed one out)."""
    if await admit(
        user_id, order_id, AwardKind.COUPON,
        catalogue=catalogue, shards=shards, profiles=profiles, clock=clock,
    ):  # fmt: skip
        async with shards.for_user(user_id) as uow:
            await record_claim(uow, user_id, order_id, clock.now())
            await uow.commit()
    async with config() as cfg:
        return (await cfg.code_pools.for_orders([order_id])).get(order_id)


Swept = dict[tuple[int, int, int], datetime]  # (activity, strategy, award) -> cutoff done


async def expire_prizes(
    *,
    config: Callable[[], UnitOfWork],
    catalogue: Catalogue,
    shards: Shards,
    clock: Clock,
    swept: Swept | None = None,
) -> int:
    """Mark expired, on every shard, the won prizes of running and closed activities whose
    validity has ended and that were not claimed: how many were marked. Their stock is not
    given back (docs/prize-claims.md). `swept` remembers, between runs of one process, the
    cutoff each prize was marked up to on every shard, so that a run reads only the wins
    won since (a closed activity's prizes then cost nothing); a new process starts over."""
    now = clock.now()
    swept = {} if swept is None else swept
    async with config() as uow:
        activities = [a for a in await uow.activities.all() if a.state in FROZEN]
        awards = await uow.awards.all()
    marked = 0
    for activity in activities:
        strategy = (await catalogue.engine(activity)).strategy
        for prize in strategy.prizes:
            award = awards.get(prize.award_id)
            validity = prize.claim.validity
            if validity is None or award is None or award.kind not in CLAIMED_KINDS:
                continue
            before = validity.won_before(now, activity.end_at, activity.time_zone)
            key = (activity.id, strategy.id, prize.award_id)
            if before is None or ((after := swept.get(key)) is not None and after >= before):
                continue
            for shard in range(len(shards.every())):
                while True:
                    async with shards.every()[shard] as unit:
                        done = await unit.prize_claims.expire(
                            activity.id, strategy.id, prize.award_id, after, before, now
                        )
                        await unit.commit()
                    marked += done
                    if not done:
                        break
            # Draws still committing may hold wins from just before `now`: read them again.
            swept[key] = min(before, now - IN_FLIGHT)
    return marked
