"""Stock reconciliation: the fast counter, the stock claims and the award rows, side by side.

The award rows are the truth of what was won; no cached "surplus" column takes part.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass

from raffle.domain.strategy import Strategy
from raffle.service.catalogue import Catalogue
from raffle.service.ports import PrizeStock, Shards

ClaimCounts = Callable[[int], Awaitable[Mapping[int, int]]]  # strategy id -> claims per award
UnitsLeft = Callable[[int, int], Awaitable[int | None]]  # (strategy, award) -> in the counter


@dataclass(frozen=True, slots=True)
class PrizeDrift:
    """One stocked prize as seen by the counter, the claims and the award rows (wins).

    Meaningful once no draw is in flight: a draw between taking its unit and committing its
    win shows as a unit leaked, or as drift.
    """

    strategy_id: int
    award_id: int
    stock: int
    claims: int
    wins: int
    left: int | None  # None: the counter is not loaded (it is rebuilt from the claims on use)

    @property
    def drift(self) -> int | None:
        """Units the counter lacks against the claims: 0 when they agree. Above 0 those units
        would never be handed out; below 0 the counter offers slots already claimed, which
        the claims then refuse (no oversell, but draws find the prize empty)."""
        return None if self.left is None else (self.stock - self.claims) - self.left

    @property
    def leaked(self) -> int:
        """Claims without an award row: units taken by draws whose transaction failed."""
        return max(self.claims - self.wins, 0)

    @property
    def unclaimed_wins(self) -> int:
        """Award rows without a claim: must be 0, every win of a stocked prize is claimed."""
        return max(self.wins - self.claims, 0)

    @property
    def oversold(self) -> int:
        return max(self.wins - self.stock, 0)


async def count_wins(shards: Shards, strategy_id: int, award_ids: Iterable[int]) -> dict[int, int]:
    """Award rows per prize over every shard: what was won, whatever any counter says."""
    wins = dict.fromkeys(award_ids, 0)
    for uow in shards.every():
        async with uow:
            for award_id in wins:
                wins[award_id] += await uow.wins.count(strategy_id, award_id)
    return wins


async def reconcile(
    strategy: Strategy, shards: Shards, claims: ClaimCounts | None, left: UnitsLeft
) -> list[PrizeDrift]:
    """The stocked prizes of `strategy`, in its order, with wins counted on every shard.
    Without claims (the embedded default counts in memory) the award rows stand in for them:
    every unit taken there is a committed win.

    Compares counts: a leaked claim and an unclaimed win of the same prize offset each other.
    """
    stocked = {p.award_id: p.stock for p in strategy.prizes if p.stock is not None}
    wins = await count_wins(shards, strategy.id, stocked)
    claimed = await claims(strategy.id) if claims else wins
    return [
        PrizeDrift(
            strategy_id=strategy.id,
            award_id=award_id,
            stock=stock,
            claims=claimed.get(award_id, 0),
            wins=wins[award_id],
            left=await left(strategy.id, award_id),
        )
        for award_id, stock in stocked.items()
    ]


async def stock_report(
    activity_id: int,
    *,
    catalogue: Catalogue,
    shards: Shards,
    stock: PrizeStock,
    claims: ClaimCounts | None,
) -> list[PrizeDrift]:
    """Reconcile an activity's prizes; meaningful when no draw is in flight."""
    activity = await catalogue.activity(activity_id)
    strategy = (await catalogue.engine(activity)).strategy
    await stock.warm(strategy.id)  # a counter lost with the cache's data is rebuilt first
    return await reconcile(strategy, shards, claims, stock.left)
