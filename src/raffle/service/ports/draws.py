"""The draw's doors: a backend's draw store, and the batches that PostgreSQL's runs on."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from raffle.domain.activity import Activity
from raffle.domain.draws import OutboxMessage, RaffleOrder, Win
from raffle.domain.engine import DrawEngine
from raffle.domain.fairness import SeedInForce
from raffle.domain.points import PointsOrder
from raffle.domain.policies import Counts, Entry, Standing
from raffle.domain.quota import QuotaAccount, QuotaPack
from raffle.domain.randomness import RandomSource
from raffle.domain.receipts import Receipt
from raffle.service.ports.base import Transaction
from raffle.service.ports.runtime import PrizeStock

# What a batch of draws takes a chance for: user_id, activity_id, day, month, request_key.
Claim = tuple[str, int, str, str, str | None]


@dataclass(frozen=True, slots=True)
class Draw:
    user_id: str
    activity_id: int
    request_key: str | None = None  # the Idempotency-Key: a retry returns the first result


@dataclass(frozen=True, slots=True)
class DrawResult:
    order_id: str
    activity_id: int
    award_id: int
    points: int | None
    rule: str
    draw_count: int
    created_at: datetime
    replayed: bool = False
    receipt: Receipt | None = None  # what anyone can check the draw by (domain/receipts.py)


@dataclass(frozen=True, slots=True)
class Attempt:
    """A draw ready to run: its activity open, its strategy compiled, its time taken."""

    cmd: Draw
    activity: Activity
    engine: DrawEngine
    welcome: QuotaPack | None  # opens the account on a first visit
    stock: PrizeStock
    rng: RandomSource
    now: datetime
    # The activity's cap counters (service/caps.py): slots taken like stock, with the
    # activity as the "strategy" and the Cap as the "award". None: the activity has none.
    caps: PrizeStock | None = None
    entry: Entry | None = None  # the activity's policies and caps for the user, if it has any
    # The committed seed the draw's randomness comes from, and what its receipt needs;
    # None: the draw takes `rng` as it is.
    fairness: SeedInForce | None = None

    def claim(self) -> Claim:
        """What taking its chance needs, for a batch."""
        day, month = self.activity.periods(self.now)
        return self.cmd.user_id, self.activity.id, day, month, self.cmd.request_key


class DrawStore(Protocol):
    """Where a backend's draws run, each in a transaction on its user's shard: the chance
    taken, the prize drawn, the order, win and outbox message recorded (or the first result
    of its Idempotency-Key replayed). One user's draws take turns; a draw that does not
    commit spends no chance and gives its stock back."""

    async def run(self, attempt: Attempt) -> DrawResult: ...

    async def close(self) -> None:
        """Close what the store keeps open between draws."""
        ...

    def resize(self, size: int) -> None:
        """At most `size` draws in one transaction from now on (where draws share one)."""
        ...


@dataclass(frozen=True, slots=True)
class Chance:
    """What taking a chance found for one draw of a batch."""

    account: QuotaAccount | None  # after the chance was taken; None if none was left
    opened: bool  # whether the user's account in the activity exists
    replay: RaffleOrder | None  # the order recorded earlier with the draw's Idempotency-Key


@dataclass(frozen=True, slots=True)
class Reading:
    """What admitting one draw reads in its transaction: counter rows of the user in the
    activity (each row's joins and wins), and (if `balance`) their points available, locked
    until the commit."""

    counters: Sequence[str]
    balance: bool


@dataclass(frozen=True, slots=True)
class Counting:
    """What one admitted draw writes in its transaction: what it adds to each counter row
    (joins, wins), and the points it costs (a spend order, out_business_no the raffle
    order's id)."""

    counters: Mapping[str, Counts]
    debit: PointsOrder | None


class DrawBatch(Transaction, Protocol):
    """One transaction on one shard database for draws of many users, one draw per user;
    each method is one statement for the whole batch, draws named by their position."""

    async def consume(
        self, claims: Sequence[Claim], reads: Mapping[int, Reading] | None = None
    ) -> list[Chance]:
        """Take a chance for each draw (in all three limits, or in none) and look up its
        replay; in the order of `claims`. `reads` are what `standings` will be asked for the
        draws that get a chance: a store may read them here, in the same round trip."""
        ...

    async def open_accounts(self, welcomes: Mapping[int, QuotaPack]) -> dict[int, QuotaAccount]:
        """First visits (by position in `consume`'s claims): open each draw's account with
        its welcome pack (each with a chance in all three limits) and take the draw's chance
        from it. The accounts after it, by draw, of those this opened: an account that
        another transaction opened meanwhile is left as it is, and its draw is not in the
        answer."""
        ...

    async def wins(self, orders: Sequence[RaffleOrder]) -> dict[str, Win]:
        """The wins recorded with these orders (replays), by order id."""
        ...

    async def give_back(self, draws: Collection[int]) -> None:
        """Return what `consume` or `open_accounts` took for these draws: they are not
        recorded."""
        ...

    async def standings(self, reads: Mapping[int, Reading]) -> dict[int, Standing]:
        """For draws with participation (by position): their counters (missing ones are
        zero) and points available, the points accounts locked. The account row locks that
        `consume` took make one user's draws in an activity take turns, so the counters
        read are those of every draw committed before."""
        ...

    async def count(self, counts: Mapping[int, Counting]) -> None:
        """Add to the draws' counters and debit their points (by position); a debit was
        checked against the balance `standings` read and locked."""
        ...

    async def record(self, draws: Sequence[tuple[RaffleOrder, Win, OutboxMessage]]) -> None:
        """Add each draw's order, win and outbox message. An Idempotency-Key that another
        transaction recorded after `consume` looked it up raises Contention: run again, the
        draw replays it."""
        ...

    async def announce(self, notices: Sequence[tuple[str, OutboxMessage]]) -> None:
        """Add more outbox messages (stock notices), each to the shard table of its user id;
        a batch's last statement."""
        ...


class DrawBatches(Protocol):
    """Draws in batches, one lane (a shard database) at a time."""

    size: int  # the most draws in one batch
    sizes: Counter[int]  # batches begun so far, by their size

    def lane(self, user_id: str) -> int:
        """The lane of the database that holds `user_id`'s rows."""
        ...

    def begin(self, lane: int) -> DrawBatch: ...

    @property
    def failed(self) -> int:
        """Batches rolled back on an error (their draws went again, one per batch)."""
        ...

    async def close(self) -> None:
        """Close the connections the lanes keep between batches."""
        ...
