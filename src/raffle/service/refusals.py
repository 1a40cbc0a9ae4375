"""Fast refusals: a draw by a user the database just found without a chance is refused from
a mark (ChanceHints), without a transaction, and never while the user has a chance.

The rule. A draw reads the account's generation before its transaction; if the database then
finds no chance in its scope (the day, the month and the welcome pack), it marks the account
with that generation and scope, unless a credit was in flight when it read. Every credit
(`crediting`) sets a new generation and enters "in flight" before its transaction, and sets a
new generation again as it leaves, after its commit. A mark refuses a draw only while the
generation is the mark's, no credit is in flight, the scope is the draw's and the mark is
younger than its life (adapters/chance_hints.py).

Why a refusal at time t is right. Chances in a scope only grow by a credit that commits:
drawing only takes, a new day or month or welcome pack is another scope, and a first visit's
draw that opens the account commits only when it drew. The marking draw's transaction, begun
after it read the generation, saw every credit committed before that read. Take a credit
committing after it: if it began after the read, then at t either it had not begun (so had
not committed: the user had no chance) or the generation had changed (no refusal); if it
began before the read, it was in flight at the read (no mark was written), for it cannot
have left, which is after its commit. Only a credit whose transaction outlives its time in
flight (CREDIT_SECONDS) can escape this; then a wrong refusal lasts until it leaves, or the
mark's life at most.

A credit that cannot enter fails before its transaction (nothing changed); one that cannot
leave (Redis unreachable, its process died after the commit) stays in flight until it
expires: marks are not trusted meanwhile, slower, never wrong. Losing Redis data loses marks
(and credits in flight: those are then voided by their leaving only).

A draw with an Idempotency-Key whose earlier try reached the database must replay it, not be
refused: the hints remember the keys of draws that went to the database (before their
transaction) for a day at least, as long as a retry replays elsewhere, and refuse only keys
not seen. A Redis data loss also forgets keys: a retry of a draw made before it, by a user
with no chance left, may then be refused (409) instead of replayed; the draw it retried
stands.
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
