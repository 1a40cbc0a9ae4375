"""An activity's caps as the database knows them: the limits, and what the award rows of
every shard have counted against them (what counters start from and reconcile against)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from raffle.domain.caps import Cap
from raffle.domain.engine import WIN, DrawEngine
from raffle.service.ports import Shards, UnitOfWork


async def cap_limits(uow: Callable[[], UnitOfWork], activity_id: int) -> dict[int, int]:
    """The activity's counted caps that are set, by Cap number."""
    async with uow() as reader:
        activity = await reader.activities.get(activity_id)
    return {} if activity is None else activity.caps.limits()


async def counted(
    uow: Callable[[], UnitOfWork], shards: Shards, activity_id: int
) -> dict[int, int]:
    """Per counted cap of the activity, what the award rows hold: the draws that won a real
    prize (neither the fallback nor "thanks") and the users who drew."""
    async with uow() as reader:
        activity = await reader.activities.get(activity_id)
        strategy = await reader.strategies.get(activity.strategy_id) if activity else None
        awards = await reader.awards.all()
    if activity is None or strategy is None:
        return {}
    outcome = DrawEngine(strategy, awards).outcome  # what within_caps counted as a win
    winners = entrants = 0
    for shard in shards.every():
        async with shard:
            tally = await shard.wins.tally(activity_id)
            entrants += await shard.wins.entrants(activity_id)
        winners += sum(n for (award_id, _), n in tally.items() if outcome(award_id) == WIN)
    found = {Cap.WINNERS: winners, Cap.PARTICIPANTS: entrants}
    return {cap: found[Cap(cap)] for cap in activity.caps.limits()}


async def room_left(
    uow: Callable[[], UnitOfWork], shards: Shards, activity_id: int
) -> dict[int, int]:
    """Slots left per counted cap: the limit less what the award rows counted. What a
    single process starts its in-memory cap counters from."""
    limits = await cap_limits(uow, activity_id)
    used = await counted(uow, shards, activity_id)
    return {cap: max(0, limit - used.get(cap, 0)) for cap, limit in limits.items()}


@dataclass(frozen=True, slots=True)
class CapDrift:
    """One counted cap as the claims and the award rows see it (no draw in flight)."""

    cap: Cap
    limit: int
    claims: int
    counted: int

    @property
    def leaked(self) -> int:
        """Claims without a committed draw: slots taken by draws that did not commit."""
        return max(self.claims - self.counted, 0)

    @property
    def over(self) -> int:
        """Counted beyond the limit: must be 0."""
        return max(self.counted - self.limit, 0)


async def cap_report(
    uow: Callable[[], UnitOfWork],
    shards: Shards,
    activity_id: int,
    claims: Callable[[int], Awaitable[Mapping[int, int]]] | None,
) -> list[CapDrift]:
    """The activity's counted caps reconciled; without claims (the embedded default counts
    in memory) the award rows stand in for them. Meaningful when no draw is in flight."""
    limits = await cap_limits(uow, activity_id)
    found = await counted(uow, shards, activity_id)
    held = await claims(activity_id) if claims else found
    return [
        CapDrift(Cap(cap), limit, held.get(cap, 0), found.get(cap, 0))
        for cap, limit in limits.items()
    ]
