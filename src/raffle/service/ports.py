"""The doors the use cases go through: storage behind units of work, stock, sessions, time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from types import TracebackType
from typing import Protocol, Self

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award
from raffle.domain.draws import OutboxMessage, RaffleOrder, Win
from raffle.domain.quota import QuotaAccount, QuotaPack, Sku
from raffle.domain.strategy import Strategy
from raffle.domain.users import Session, User


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, aware, in UTC."""
        ...


class Transaction(Protocol):
    """`async with` opens one transaction; nothing is kept unless `commit` is awaited in it."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def commit(self) -> None: ...


# --- configuration: one database, unsharded -------------------------------------------


class AwardRepository(Protocol):
    async def save(self, award: Award) -> None:
        """Insert the award, or replace the one with the same id."""
        ...

    async def all(self) -> dict[int, Award]: ...


class StrategyRepository(Protocol):
    async def save(self, strategy: Strategy) -> None:
        """Insert the strategy, or replace the one with the same id with its prizes and rules."""
        ...

    async def get(self, strategy_id: int) -> Strategy | None: ...

    async def ids(self) -> list[int]: ...


class ActivityRepository(Protocol):
    async def save(self, activity: Activity) -> None:
        """Insert, or replace everything of the stored activity but its state."""
        ...

    async def get(self, activity_id: int) -> Activity | None: ...

    async def all(self) -> list[Activity]: ...

    async def compare_and_set(
        self, activity_id: int, expected: ActivityState, new: ActivityState
    ) -> bool:
        """Move the state from `expected` to `new`; False if it was not `expected`."""
        ...

    async def using_strategy(self, strategy_id: int) -> list[Activity]: ...


class PackRepository(Protocol):
    async def save(self, pack: QuotaPack) -> None: ...

    async def get(self, pack_id: int) -> QuotaPack | None: ...


class SkuRepository(Protocol):
    async def save(self, sku: Sku) -> None:
        """Insert, or update; a changed stock keeps what was already sold."""
        ...

    async def get(self, sku: int) -> Sku | None: ...

    async def for_activity(self, activity_id: int) -> list[Sku]: ...

    async def stock_left(self, sku: int) -> int: ...

    async def take(self, sku: int) -> bool:
        """Take one unit of the SKU's stock; False (and nothing changed) when none is left."""
        ...

    async def give_back(self, sku: int) -> None: ...


class UserRepository(Protocol):
    async def add(self, user: User) -> bool:
        """Store a new user; False when the name is taken."""
        ...

    async def get(self, user_id: str) -> User | None: ...


class UnitOfWork(Transaction, Protocol):
    """A transaction on the configuration database."""

    awards: AwardRepository
    strategies: StrategyRepository
    activities: ActivityRepository
    packs: PackRepository
    skus: SkuRepository
    users: UserRepository


# --- user dimension: sharded by user id ----------------------------------------------


class QuotaRepository(Protocol):
    async def get(
        self, user_id: str, activity_id: int, day: str, month: str
    ) -> QuotaAccount | None:
        """The account as seen on `day` and in `month` (a new day starts at the allowance)."""
        ...

    async def open(self, user_id: str, activity_id: int, pack: QuotaPack | None) -> bool:
        """Create the account, credited with `pack` (the welcome pack) if given; False if it
        existed already, in which case nothing changes."""
        ...

    async def credit(
        self, user_id: str, activity_id: int, pack: QuotaPack, day: str, month: str
    ) -> None:
        """Add the pack's chances to the account (created if missing) and to the running
        day and month."""
        ...

    async def consume(
        self, user_id: str, activity_id: int, day: str, month: str
    ) -> QuotaAccount | None:
        """Take one chance from the total, the day and the month, all or none; the account
        after it, or None when any of the three is exhausted (nothing changed then)."""
        ...


class TopUpRepository(Protocol):
    async def add(
        self,
        *,
        order_id: str,
        user_id: str,
        activity_id: int,
        sku: int,
        out_business_no: str,
        pack: QuotaPack,
        at: datetime,
    ) -> bool:
        """Record a top-up; False when this user's `out_business_no` was used before."""
        ...

    async def exists(self, user_id: str, out_business_no: str) -> bool: ...


class OrderRepository(Protocol):
    async def add(self, order: RaffleOrder) -> None: ...

    async def by_request(self, user_id: str, request_key: str) -> RaffleOrder | None: ...

    async def history(
        self, user_id: str, activity_id: int, before: str | None, limit: int
    ) -> Sequence[tuple[RaffleOrder, Win]]:
        """The user's draws in an activity, newest first, older than order id `before`."""
        ...


class WinRepository(Protocol):
    async def add(self, win: Win) -> None: ...

    async def get(self, order_id: str) -> Win | None: ...

    async def count(self, strategy_id: int, award_id: int) -> int:
        """How many wins of this prize this shard holds (for stock reconciliation)."""
        ...


class OutboxRepository(Protocol):
    async def add(self, message: OutboxMessage) -> None: ...


class ShardUnitOfWork(Transaction, Protocol):
    """A transaction on the shard that holds one user's rows."""

    quotas: QuotaRepository
    top_ups: TopUpRepository
    orders: OrderRepository
    wins: WinRepository
    outbox: OutboxRepository


class Shards(Protocol):
    def for_user(self, user_id: str) -> ShardUnitOfWork:
        """A unit of work on the shard (database and table index) of `user_id`."""
        ...

    def every(self) -> list[ShardUnitOfWork]:
        """One unit of work per shard: what jobs and reports iterate."""
        ...


# --- prize stock, sessions ------------------------------------------------------------


class PrizeStock(Protocol):
    async def prepare(self, strategy_id: int) -> None:
        """Get ready to take the strategy's stock; called before a draw's transaction opens,
        so no loading has to happen inside it. Cheap once ready."""
        ...

    async def warm(self, strategy_id: int) -> None:
        """Load the counters of the strategy that the fast store lacks (after it lost data),
        from the database."""
        ...

    async def take(self, strategy_id: int, award_id: int, order_id: str) -> bool:
        """Take one unit atomically for `order_id`; False when none is left."""
        ...

    async def give_back(self, strategy_id: int, award_id: int, order_id: str) -> None:
        """Return a unit taken for a draw whose transaction did not commit (best effort)."""
        ...

    async def left(self, strategy_id: int, award_id: int) -> int | None:
        """Units left as the fast counter sees them; None if it does not know yet."""
        ...


class SessionStore(Protocol):
    async def create(self, session: Session, token_hash: str, ttl_seconds: int) -> None: ...

    async def touch(self, token_hash: str, ttl_seconds: int) -> Session | None:
        """The live session, its expiry slid to `ttl_seconds` from now (a store may skip the
        slide while little of the TTL has passed); None if expired."""
        ...

    async def delete(self, token_hash: str) -> None: ...

    async def delete_expired(self) -> int:
        """Forget sessions that expired untouched; how many there were."""
        ...


class RateLimiter(Protocol):
    async def hit(self, key: str, limit: int, window_seconds: int) -> int:
        """Count one event under `key`; 0 if within `limit` per window, else the seconds to
        wait before the next is allowed."""
        ...

    async def count(self, key: str, window_seconds: int) -> int:
        """Events counted under `key` in the current window, without adding one."""
        ...

    async def reset(self, key: str) -> None: ...


class IdempotencyStore(Protocol):
    async def begin(self, user_id: str, key: str, request_hash: str) -> tuple[int, str] | None:
        """Reserve `key` for this request. None: go ahead (and `finish` later). A stored
        (status, body): replay it. Raises KeyInFlight or KeyReused (from idempotency)."""
        ...

    async def finish(self, user_id: str, key: str, status: int, body: str) -> None: ...

    async def abandon(self, user_id: str, key: str) -> None:
        """Forget a reservation whose request failed unexpectedly, so a retry may run."""
        ...

    async def delete_older(self, than: datetime) -> int:
        """Forget keys first used before `than`; how many there were."""
        ...
