"""Fast refusals: a draw by a user the database just found without a chance is refused from
a mark (ChanceHints), without a transaction, and never while the user has a chance; the rule
and why it holds are in docs/architecture.md#fast-refusals.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass
from datetime import datetime

from raffle.domain.activity import Activity
from raffle.domain.quota import NoChances, QuotaPack
from raffle.service.ports import ChanceHints, Clock, Holder


def scope(activity: Activity, welcome: QuotaPack | None, now: datetime) -> str:
    """What a refusal depends on besides the account: the day and month of `now`, and the
    welcome pack that a first visit opens the account with."""
    day, month = activity.periods(now)
    pack = "-" if welcome is None else f"{welcome.id}:{welcome.total}:{welcome.day}:{welcome.month}"
    return f"{day}/{month}/{pack}"


@dataclass(frozen=True, slots=True)
class Refusal:
    """A draw's look at the hints before its transaction, and the mark it owes if refused."""

    hints: ChanceHints
    holder: Holder
    scope: str
    generation: str | None
    now: datetime

    async def noted(self) -> None:
        """The database refused the draw: mark it (best effort: a lost mark is a slower
        refusal)."""
        if self.generation is not None:
            with contextlib.suppress(Exception):
                await self.hints.mark(self.holder, self.scope, self.generation, self.now)


async def look(
    hints: ChanceHints,
    user_id: str,
    activity: Activity,
    welcome: QuotaPack | None,
    request_key: str | None,
    now: datetime,
) -> Refusal:
    """Raises NoChances when a trusted mark refuses the draw; else what to note if the
    database refuses it."""
    holder, where = (user_id, activity.id), scope(activity, welcome, now)
    seen = await hints.look(holder, where, request_key, now)
    if seen.refused:
        raise NoChances(f"no chances left in activity {activity.id}")
    return Refusal(hints, holder, where, seen.generation, now)


@contextlib.asynccontextmanager
async def crediting(
    hints: ChanceHints, holders: Collection[Holder], clock: Clock
) -> AsyncIterator[None]:
    """Around a transaction that may credit chances to `holders`, and its commit: their
    marks are void from before it until after it."""
    if not holders:
        yield
        return
    credit = secrets.token_hex(8)
    await hints.begin_credit(list(holders), credit, clock.now())
    try:
        yield
    finally:
        with contextlib.suppress(Exception):  # left in flight: it expires (slower, not wrong)
            await hints.end_credit(list(holders), credit, clock.now())
