"""The doors the use cases go through: storage behind units of work, stock, sessions, time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from types import TracebackType
from typing import Protocol, Self

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award
from raffle.domain.delivery import Grant
from raffle.domain.draws import DeliveryError, OutboxMessage, RaffleOrder, Win, WinState
from raffle.domain.errors import Unavailable
from raffle.domain.fulfilment import AccessGrant, Address, PoolStats, Shipment, ShipmentState
from raffle.domain.points import PointsAccount, PointsOrder
from raffle.domain.quota import QuotaAccount, QuotaPack, Sku, TopUpOrder
from raffle.domain.rebates import RebateOrder, RebateRule
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

    async def all(self) -> list[QuotaPack]: ...


class SkuRepository(Protocol):
    async def save(self, sku: Sku) -> None:
        """Insert, or update; a changed stock keeps what was already sold."""
        ...

    async def get(self, sku: int) -> Sku | None: ...

    async def for_activity(self, activity_id: int) -> list[Sku]: ...

    async def all(self) -> list[Sku]: ...

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


class RebateRuleRepository(Protocol):
    async def save(self, rule: RebateRule) -> None:
        """Insert the rule, or replace the one for the same activity and behaviour."""
        ...

    async def for_activity(self, activity_id: int) -> list[RebateRule]: ...

    async def all(self) -> list[RebateRule]: ...


class CouponCodes(Protocol):
    async def hand_out(self, pool: str, order_id: str, user_id: str, at: datetime) -> str | None:
        """The code of `pool` handed to `order_id`: the one it got before if any, else a free
        one, bound to it for good; None when the pool has no free code."""
        ...


class CodePoolRepository(CouponCodes, Protocol):
    async def add(self, pool: str, codes: Sequence[str]) -> int:
        """Store the codes in the pool; how many were new (ones it holds are skipped)."""
        ...

    async def stats(self, pools: Collection[str] | None = None) -> list[PoolStats]:
        """Codes in all and handed out, per pool (every pool when `pools` is None)."""
        ...

    async def for_orders(self, order_ids: Collection[str]) -> dict[str, str]:
        """The code handed to each of these orders that got one."""
        ...

    async def free_codes(self) -> dict[str, list[str]]:
        """Every pool's codes not handed out yet, in order (a pool with none: empty)."""
        ...


class UnitOfWork(Transaction, Protocol):
    """A transaction on the configuration database."""

    awards: AwardRepository
    strategies: StrategyRepository
    activities: ActivityRepository
    packs: PackRepository
    skus: SkuRepository
    users: UserRepository
    rebate_rules: RebateRuleRepository
    code_pools: CodePoolRepository


# --- user dimension: sharded by user id ----------------------------------------------


Credit = tuple[str, int, QuotaPack, str, str]  # user_id, activity_id, pack, day, month


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

    async def credit_many(self, credits: Sequence[Credit]) -> None:
        """`credit` for each (user_id, activity_id, pack, day, month), in a few statements
        whatever their number."""
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

    async def add_many(self, orders: Sequence[TopUpOrder]) -> set[str]:
        """Record top-ups in a few statements; the order ids of those recorded, which leave
        out any whose user's `out_business_no` was used before (or earlier in `orders`).
        For callers that hold what makes their numbers theirs (a delivery holds its award
        record locked): two transactions adding the same number at once may fail."""
        ...

    async def exists(self, user_id: str, out_business_no: str) -> bool: ...


class OrderRepository(Protocol):
    async def add(self, order: RaffleOrder) -> None: ...

    def expect(self, user_id: str, request_key: str) -> None:
        """A hint that `by_request(user_id, request_key)` follows the next statement: an
        adapter may look the order up with that statement (PostgreSQL, a round trip less)."""
        ...

    async def by_request(self, user_id: str, request_key: str) -> RaffleOrder | None: ...

    async def per_minute(self, activity_id: int, since: datetime) -> dict[datetime, int]:
        """The activity's draws on this shard from `since` on, counted per minute (UTC,
        keyed by the minute's start); minutes without draws are left out."""
        ...

    async def history(
        self, user_id: str, activity_id: int | None, before: str | None, limit: int
    ) -> Sequence[tuple[RaffleOrder, Win]]:
        """The user's draws in an activity (in every one if None), newest first, older than
        order id `before`."""
        ...


class WinRepository(Protocol):
    async def add(self, win: Win) -> None: ...

    async def get(self, order_id: str) -> Win | None: ...

    async def count(self, strategy_id: int, award_id: int) -> int:
        """How many wins of this prize this shard holds (for stock reconciliation)."""
        ...

    async def present(self, order_ids: Sequence[str]) -> set[str]:
        """Those of `order_ids` that have an award record on this shard."""
        ...

    async def settle(self, order_id: str, expected: WinState, new: WinState) -> bool:
        """Move the record from `expected` to `new` (a compare-and-set that locks the row
        until commit); False if it is not in `expected` or does not exist."""
        ...

    async def note_error(self, order_id: str, error: DeliveryError | None) -> bool:
        """Keep why the last delivery attempt failed (None: forget it) on a record still
        waiting (create), the code and message cut to the columns' size; False if none."""
        ...

    async def settle_many(
        self, order_ids: Sequence[str], expected: WinState, new: WinState
    ) -> set[str]:
        """`settle` for many records at once: those moved (and locked until commit)."""
        ...

    async def in_state(
        self, state: WinState, limit: int, activity_id: int | None = None
    ) -> list[Win]:
        """Records in `state` (of one activity if given), oldest first (failed deliveries,
        for operators)."""
        ...

    async def states(self) -> dict[WinState, int]:
        """How many records this shard holds in each state."""
        ...

    async def tally(self, activity_id: int) -> dict[tuple[int, WinState], int]:
        """The activity's records on this shard by (award, state)."""
        ...


class OutboxRepository(Protocol):
    async def add(self, message: OutboxMessage) -> None: ...

    async def claim(
        self, now: datetime, limit: int, stale_before: datetime | None = None
    ) -> list[OutboxMessage]:
        """Mark up to `limit` messages as being sent by this caller (state `sending`,
        attempts + 1, updated_at = now) and return them; rows another claimer is claiming
        are skipped, not waited for. Without `stale_before`: new messages and failed ones
        whose backoff has passed. With it: any message not published whose row was last
        touched before then (the compensation job)."""
        ...

    async def mark(self, message_ids: Sequence[str], published: bool, now: datetime) -> None:
        """Record the broker's answer: published, or failed (tried again after a backoff)."""
        ...

    async def unpublished(self, before: datetime) -> int:
        """Messages not published yet that were written before `before`."""
        ...

    async def states(self) -> dict[str, int]:
        """How many messages are in each state (create, sending, published, failed)."""
        ...


class DeliveryRepository(Protocol):
    """Delivered effects, one row per order: its primary key makes a second delivery of the
    same win impossible, whatever the broker redelivers."""

    async def add(self, grant: Grant, at: datetime) -> bool:
        """Record the delivery of `grant`; False (nothing written) if it was delivered before."""
        ...

    async def add_many(self, grants: Sequence[Grant], at: datetime) -> set[str]:
        """`add` for many: the order ids recorded now. Callers hold the award records' locks
        (from settling them), so no other transaction records the same orders meanwhile."""
        ...

    async def count(self) -> int: ...

    async def tally(self, activity_id: int) -> dict[int, int]:
        """The activity's delivery rows on this shard by award."""
        ...


class PointsRepository(Protocol):
    async def account(self, user_id: str) -> PointsAccount | None: ...

    async def add(self, order: PointsOrder) -> bool:
        """Record the order and apply it to the balance (the account made if missing);
        False, and nothing changed, when this user's `out_business_no` was applied before.
        A spend the balance does not cover raises InsufficientPoints and changes nothing."""
        ...

    async def by_business_no(self, user_id: str, out_business_no: str) -> PointsOrder | None: ...

    async def history(self, user_id: str, before: str | None, limit: int) -> list[PointsOrder]:
        """The user's orders, newest first, older than order id `before`."""
        ...


class RebateOrderRepository(Protocol):
    async def add(self, order: RebateOrder) -> bool:
        """Record the rebate; False when this user, activity, behaviour and business key
        were rebated before (nothing changed then)."""
        ...

    async def get(
        self, user_id: str, activity_id: int, behaviour: str, business_key: str
    ) -> RebateOrder | None: ...

    async def keys(
        self, user_id: str, activity_id: int, behaviour: str, first: str, last: str
    ) -> list[str]:
        """The business keys rebated between `first` and `last` (inclusive, as text)."""
        ...


class AccessGrantRepository(Protocol):
    async def add(self, grant: AccessGrant) -> bool:
        """Grant access; False (nothing changed) when the user has it or the order granted
        it already."""
        ...

    async def of_user(self, user_id: str) -> list[AccessGrant]:
        """The user's grants, oldest first."""
        ...


class ShipmentRepository(Protocol):
    async def open(self, shipment: Shipment) -> bool:
        """Store a new shipment; False (nothing changed) when its order has one."""
        ...

    async def get(self, order_id: str) -> Shipment | None: ...

    async def set_address(self, order_id: str, address: Address, at: datetime) -> bool:
        """Address an unshipped shipment, making it ready; False when it has shipped."""
        ...

    async def ship(self, order_id: str, tracking: str | None, at: datetime) -> bool:
        """Mark a ready shipment shipped; False when it was not ready."""
        ...

    async def in_state(self, state: ShipmentState, after: str | None, limit: int) -> list[Shipment]:
        """Shipments in `state` on this shard, by order id, from after `after`."""
        ...

    async def for_orders(self, order_ids: Collection[str]) -> dict[str, Shipment]: ...


class ShardUnitOfWork(Transaction, Protocol):
    """A transaction on the shard that holds one user's rows."""

    quotas: QuotaRepository
    top_ups: TopUpRepository
    orders: OrderRepository
    wins: WinRepository
    outbox: OutboxRepository
    points: PointsRepository
    rebates: RebateOrderRepository
    # The configuration database's code pools: claimed in this transaction when the shard
    # is that database, else in a transaction of their own (see SqlShardUnitOfWork).
    codes: CouponCodes
    grants: AccessGrantRepository
    shipments: ShipmentRepository
    deliveries: DeliveryRepository


class Shards(Protocol):
    def for_user(self, user_id: str) -> ShardUnitOfWork:
        """A unit of work on the shard (database and table index) of `user_id`."""
        ...

    def every(self) -> list[ShardUnitOfWork]:
        """One unit of work per shard: what jobs and reports iterate."""
        ...

    def index(self, user_id: str) -> int:
        """The position in `every()` of the shard that holds `user_id`'s rows."""
        ...

    # Draws in batches (group commit), on PostgreSQL; None where each draw commits alone.
    batches: DrawBatches | None


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

    async def give_back(self, draws: Collection[int]) -> None:
        """Return what `consume` took for these draws: they are not recorded."""
        ...

    async def record(self, draws: Sequence[tuple[RaffleOrder, Win, OutboxMessage]]) -> None:
        """Add each draw's order, win and outbox message."""
        ...


class DrawBatches(Protocol):
    """Draws in batches, one lane (a shard database) at a time, where the backend can."""

    size: int  # the most draws in one batch
    sizes: Counter[int]  # batches begun so far, by their size
    failed: int  # batches rolled back on an error (their draws ran again alone)

    def lane(self, user_id: str) -> int:
        """The lane of the database that holds `user_id`'s rows."""
        ...

    def begin(self, lane: int) -> DrawBatch: ...


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
