"""Prize stock, sessions, rate limits, idempotency keys and the message broker."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import Unavailable
from raffle.domain.users import Session


@dataclass(frozen=True, slots=True)
class Taken:
    """A unit taken, and the units left right after it: of concurrent takes, each number is
    seen by exactly one (where stock warnings are detected)."""

    left: int


class PrizeStock(Protocol):
    async def prepare(self, strategy_id: int) -> None:
        """Get ready to take the strategy's stock; called before a draw's transaction opens,
        so no loading has to happen inside it. Cheap once ready."""
        ...

    async def warm(self, strategy_id: int) -> None:
        """Load the counters of the strategy that the fast store lacks (after it lost data),
        from the database."""
        ...

    async def take(self, strategy_id: int, award_id: int, order_id: str) -> Taken | None:
        """Take one unit atomically for `order_id`; None when none is left."""
        ...

    async def give_back(self, strategy_id: int, award_id: int, order_id: str) -> int | None:
        """Return a unit taken for a draw whose transaction did not commit (best effort); the
        units left after it, None when nothing came back."""
        ...

    async def left(self, strategy_id: int, award_id: int) -> int | None:
        """Units left as the fast counter sees them; None if it does not know yet."""
        ...


class SignInCalendar(Protocol):
    """The days a user signed in, by month: a fast copy of the sign-in rebate orders."""

    async def mark(self, user_id: str, activity_id: int, day: date) -> None:
        """Note a sign-in that committed (best effort: the database is the truth)."""
        ...

    async def month(self, user_id: str, activity_id: int, month: date) -> frozenset[int]:
        """The days (1-31) of the month of `month` on which the user signed in."""
        ...


class SessionStore(Protocol):
    async def create(self, session: Session, token_hash: str, ttl_seconds: int) -> None: ...

    async def touch(self, token_hash: str, ttl_seconds: int) -> Session | None:
        """The live session, its expiry slid to `ttl_seconds` from now (a store may skip the
        slide while little of the TTL has passed); None if expired or unknown; SessionEnded
        if `end_all` ended it."""
        ...

    async def delete(self, token_hash: str) -> None: ...

    async def end_all(self, user_id: str) -> int:
        """End every session of the user at once, each kept as ended until it would have
        expired; how many there were."""
        ...

    async def delete_expired(self) -> int:
        """Forget sessions that expired untouched; how many there were."""
        ...

    async def watch(self) -> None:
        """Keep this process's copies of sessions in step with the other processes' logouts
        and ends, until cancelled; returns at once where the store keeps none."""
        ...


class IdNews(Protocol):
    """How every process learns which of its copies are stale (profiles by user, sessions
    by token hash), to forget them."""

    async def announce(self, ids: Collection[str] | None) -> None:
        """Tell every process these ids changed (None: any may have)."""
        ...

    def changes(self) -> AsyncIterator[Collection[str] | None]:
        """Yields the ids that changed; None when any may have (at first, and after news
        may have been missed), until cancelled."""
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


# --- the message broker ----------------------------------------------------------------

Handler = Callable[[OutboxMessage], Awaitable[None]]


class Broker(Protocol):
    """At-least-once messaging: publishing is confirmed, consuming is acknowledged."""

    async def publish(self, message: OutboxMessage) -> None:
        """Return once the broker has taken responsibility for the message (a publisher
        confirm); raise Unavailable when it did not confirm in time."""
        ...

    async def publish_many(self, messages: Sequence[OutboxMessage]) -> list[Unavailable | None]:
        """`publish` for a batch at once; per message, in order, None once the broker took
        responsibility for it, or the Unavailable error why not (never raises it)."""
        ...

    async def consume(self, queue: str, handle: Handler) -> None:
        """Run `handle` on each message of `queue` until cancelled. A message is acknowledged
        when `handle` returns; when it raises, the message is returned and counts one failed
        attempt, and after the broker's limit of attempts it goes to `dead_letters(queue)`."""
        ...

    async def close(self) -> None: ...


def dead_letters(queue: str) -> str:
    """The queue where messages of `queue` end after too many failed attempts."""
    return f"{queue}.dead"
