"""Operators' use cases: an activity's participation policies and caps, read and replaced."""

from __future__ import annotations

from collections.abc import Callable

from raffle.domain.activity import FROZEN
from raffle.domain.policies import Participation
from raffle.service.activities import stored
from raffle.service.campaigns import FrozenOdds
from raffle.service.ports import UnitOfWork


async def participation_of(activity_id: int, uow: Callable[[], UnitOfWork]) -> Participation:
    async with uow() as u:
        await stored(activity_id, u)
        return await u.participation.get(activity_id)


async def set_participation(
    participation: Participation, uow: Callable[[], UnitOfWork]
) -> Participation:
    """Replace the activity's policies and caps. The caps of a running (or closed) activity
    are published with its odds and frozen: they change the outcome of a draw. Its
    policies, which say who may join, may change."""
    activity_id = participation.activity_id
    async with uow() as u:
        activity = await stored(activity_id, u)
        before = await u.participation.get(activity_id)
        if activity.state in FROZEN and before.caps != participation.caps:
            raise FrozenOdds(f"activity {activity_id} is {activity.state}: its caps are fixed")
        await u.participation.save(participation)
        await u.commit()
    return participation
