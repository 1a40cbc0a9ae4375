"""Participation in a draw: the activity's policies and caps as they stand for a user (made
before the transaction), checked and counted inside it (every draw store runs these steps)."""

from __future__ import annotations

from datetime import datetime

from raffle.domain.activity import Activity
from raffle.domain.engine import WIN
from raffle.domain.points import PointsKind, PointsOrder
from raffle.domain.policies import (
    Admission,
    Entry,
    Participation,
    Standing,
    admit,
    early_refusal,
    local_day,
)
from raffle.domain.profiles import Profile
from raffle.service import ids
from raffle.service.ports import Attempt, Counting, Reading, ShardUnitOfWork
from raffle.service.ports.audiences import Audience, Profiles


async def enter(
    participation: Participation,
    user_id: str,
    activity: Activity,
    now: datetime,
    profiles: Profiles | None,
    audience: Audience | None,
) -> Entry | None:
    """The activity's participation for this user's draw; None when it has no policies and
    no caps (the draw then reads and counts nothing more). Without `profiles` every profile
    is empty; without `audience` no tag holds anyone."""
    if participation.empty:
        return None
    policies = participation.policies
    profile = Profile(user_id)
    if profiles is not None and participation.needs_profile:
        profile = await profiles.of(user_id)
    early = []
    for policy in policies:
        inside = policy.tag is None or (
            audience is not None
            and await audience.holds(policy.tag, profile, local_day(activity.time_zone, now))
        )
        early.append(early_refusal(policy, inside, profile.level))
    return Entry(participation, tuple(early), now, activity.time_zone)


def reading(attempt: Attempt) -> Reading | None:
    """What the draw's transaction reads to admit it: its counters, and whether it needs
    the points balance (locked until the commit)."""
    entry = attempt.entry
    if entry is None:
        return None
    once = entry.participation.caps.once_per_prize
    awards = [prize.award_id for prize in attempt.engine.strategy.prizes] if once else ()
    return Reading(entry.counters(awards), entry.costs_points)


def admitted(attempt: Attempt, standing: Standing) -> Admission | None:
    """The admission of the draw (NotAdmitted if refused), from what its transaction read."""
    return None if attempt.entry is None else admit(attempt.entry, standing)


def counting(attempt: Attempt, order_id: str, admission: Admission, award_id: int) -> Counting:
    """What the draw adds to its counters, and the points it costs, having won `award_id`."""
    wins = attempt.engine.outcome(award_id) == WIN
    debit = None
    if admission.cost:
        debit = PointsOrder(
            ids.order_id(attempt.now), attempt.cmd.user_id, PointsKind.SPEND, admission.cost,
            order_id, f"draw in activity {attempt.activity.id}", attempt.now,
        )  # fmt: skip
    return Counting(admission.counted(award_id, wins), debit)


async def read_alone(uow: ShardUnitOfWork, attempt: Attempt, read: Reading) -> Standing:
    """`read` through the shard's repositories (a draw in a transaction of its own)."""
    user_id, activity_id = attempt.cmd.user_id, attempt.activity.id
    counts = await uow.counters.counts(user_id, activity_id, read.counters) if read.counters else {}
    balance = 0
    if read.balance and (account := await uow.points.account(user_id)) is not None:
        balance = account.available
    return Standing(counts, balance)


async def count_alone(uow: ShardUnitOfWork, attempt: Attempt, counted: Counting) -> None:
    """`counted` written through the shard's repositories."""
    await uow.counters.add(attempt.cmd.user_id, attempt.activity.id, counted.counters)
    if counted.debit is not None:
        await uow.points.add(counted.debit)  # the balance was read, and is held, above
