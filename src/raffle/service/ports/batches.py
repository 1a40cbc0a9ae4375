"""Draws in batches (group commit): a chance for each of many draws in one transaction."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from raffle.domain.draws import OutboxMessage, RaffleOrder, Win
from raffle.domain.quota import QuotaAccount, QuotaPack
from raffle.service.ports.base import Transaction

# What a batch of draws takes a chance for: user_id, activity_id, day, month, request_key.
Claim = tuple[str, int, str, str, str | None]


@dataclass(frozen=True, slots=True)
class Chance:
    """What taking a chance found for one draw of a batch."""

    account: QuotaAccount | None  # after the chance was taken; None if none was left
    opened: bool  # whether the user's account in the activity exists
    replay: RaffleOrder | None  # the order recorded earlier with the draw's Idempotency-Key


class DrawBatch(Transaction, Protocol):
    """One transaction on one shard database for draws of many users, one draw per user;
    each method is one statement for the whole batch, draws named by their position."""

    async def consume(self, claims: Sequence[Claim]) -> list[Chance]:
        """Take a chance for each draw (in all three limits, or in none) and look up its
        replay; in the order of `claims`."""
        ...

    async def open_accounts(self, welcomes: Mapping[int, QuotaPack]) -> dict[int, QuotaAccount]:
        """First visits (by position in `consume`'s claims): open each draw's account with
        its welcome pack (each with a chance in all three limits) and take the draw's chance
        from it. The accounts after it, by draw, of those this opened: an account that
        another transaction opened meanwhile is left as it is, and its draw is not in the
        answer."""
        ...

    async def give_back(self, draws: Collection[int]) -> None:
        """Return what `consume` or `open_accounts` took for these draws: they are not
        recorded."""
        ...

    async def record(self, draws: Sequence[tuple[RaffleOrder, Win, OutboxMessage]]) -> None:
        """Add each draw's order, win and outbox message."""
        ...


class DrawBatches(Protocol):
    """Draws in batches, one lane (a shard database) at a time, where the backend can."""

    size: int  # the most draws in one batch
    sizes: Counter[int]  # batches begun so far, by their size
    failed: int  # batches rolled back on an error (their draws ran again alone)
    # The service's draws waiting and in flight per lane (draw_batch.DrawLanes), kept here so
    # that they live exactly as long as the batches they use; None until set.
    lanes: object

    def lane(self, user_id: str) -> int:
        """The lane of the database that holds `user_id`'s rows."""
        ...

    def begin(self, lane: int) -> DrawBatch: ...

    async def close(self) -> None:
        """Close the connections the lanes keep between batches."""
        ...
