"""The user dimension's doors: sharded by user id."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Protocol

from raffle.domain.delivery import Grant
from raffle.domain.draws import DeliveryError, OutboxMessage, RaffleOrder, Win, WinState
from raffle.domain.fulfilment import AccessGrant, Address, Shipment, ShipmentState
from raffle.domain.points import PointsAccount, PointsOrder
from raffle.domain.prize_claims import ClaimState
from raffle.domain.quota import QuotaAccount, QuotaPack, TopUpOrder
from raffle.domain.rebates import RebateOrder
from raffle.service.ports.audit import AuditLog
from raffle.service.ports.base import Transaction
from raffle.service.ports.config import CouponCodes
from raffle.service.ports.draws import DrawStore
from raffle.service.ports.participation import CounterRepository
from raffle.service.ports.payment_orders import PaymentOrderRepository

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

    async def get(self, user_id: str, order_id: str) -> tuple[RaffleOrder, Win] | None:
        """The user's draw of that order id, with its win."""
        ...


class WinRepository(Protocol):
    async def add(self, win: Win) -> None: ...

    async def get(self, order_id: str) -> Win | None: ...

    async def count(self, strategy_id: int, award_id: int) -> int:
        """How many wins of this prize this shard holds (for stock reconciliation)."""
        ...

    async def entrants(self, activity_id: int) -> int:
        """How many users drew in the activity on this shard (every draw records a win, if
        only "thanks"): what a participants cap counted."""
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

    async def feed(
        self,
        activity_id: int,
        award_ids: Collection[int],
        bound: str | None,
        *,
        newer: bool,
        inclusive: bool,
        limit: int,
    ) -> list[Win]:
        """The activity's records of `award_ids` by order id: older than `bound`, newest
        first, or newer than it, oldest first (`inclusive`: or equal), at most `limit`."""
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

    async def backlog(self) -> tuple[int, datetime | None]:
        """Messages not published yet, and when the oldest of them was written (None: none)."""
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

    async def get(self, user_id: str, content_id: str) -> AccessGrant | None:
        """The user's grant of the content, if they hold it."""
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


class PrizeClaimRepository(Protocol):
    """Claims of won prizes: an order claimed or expired, whichever was written first."""

    async def states(self, order_ids: Collection[str]) -> dict[str, ClaimState]:
        """The stored state of each order's claim; orders without one are left out."""
        ...

    async def record(self, order_id: str, user_id: str, state: ClaimState, at: datetime) -> bool:
        """Write the order's claim; False (nothing changed) when it has one already."""
        ...

    async def expire(
        self,
        activity_id: int,
        strategy_id: int,
        award_id: int,
        won_after: datetime | None,
        won_before: datetime,
        at: datetime,
    ) -> int:
        """Mark expired the prize's wins in the activity made before `won_before` (and from
        `won_after` on, if given) that have no claim, a chunk at a time: how many were
        marked (0: none is left)."""
        ...


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
    counters: CounterRepository  # participation's joins and wins
    prize_claims: PrizeClaimRepository
    payments: PaymentOrderRepository  # payment orders, their history and payments
    audit: AuditLog  # the shard's chain


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

    draws: DrawStore  # the backend's, picked in bootstrap
