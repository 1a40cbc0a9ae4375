"""The configuration's doors: one database, unsharded."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Protocol

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award
from raffle.domain.fulfilment import PoolStats
from raffle.domain.prize_images import PrizeImage
from raffle.domain.quota import QuotaPack, Sku
from raffle.domain.rebates import RebateRule
from raffle.domain.strategy import Strategy
from raffle.domain.users import StatusChange, User, UserStatus
from raffle.service.ports.audiences import ProfileRepository
from raffle.service.ports.audit import AuditLog
from raffle.service.ports.base import Transaction
from raffle.service.ports.content import ContentRepository
from raffle.service.ports.fairness import SeedRepository
from raffle.service.ports.flash_sales import FlashSaleRepository
from raffle.service.ports.join_codes import JoinCodeRepository
from raffle.service.ports.participation import ParticipationRepository
from raffle.service.ports.route_trees import RouteTreeRepository
from raffle.service.ports.scheduled import ScheduledDraws
from raffle.service.ports.tickets import TicketRepository


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

    async def many(self, user_ids: Collection[str]) -> dict[str, User]:
        """The accounts of those of `user_ids` that have one (a page's worth), by id."""
        ...

    async def first(self, limit: int) -> list[User]:
        """Up to `limit` users, by name."""
        ...

    async def count(self) -> int: ...

    async def set_status(self, user_id: str, status: UserStatus) -> bool:
        """False when there is no such user."""
        ...

    async def record(self, change: StatusChange) -> None:
        """Keep a lock or unlock: who, when and why."""
        ...

    async def changes(self, user_id: str, limit: int) -> list[StatusChange]:
        """The account's last `limit` locks and unlocks, newest first."""
        ...

    async def set_password_hash(self, user_id: str, password_hash: str) -> bool:
        """False when there is no such user."""
        ...


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


class CampaignLoads(Protocol):
    async def take_turn(self) -> None:
        """Wait for the campaign load in progress to end, and make later ones wait until
        this transaction ends: a load then checks a configuration no other load changes."""
        ...


class PrizeImageRepository(Protocol):
    async def add(self, image: PrizeImage, now: datetime) -> None:
        """Store the image unless one of its id is stored (the same bytes)."""
        ...

    async def get(self, image_id: str) -> PrizeImage | None: ...

    async def known(self, image_ids: Collection[str]) -> set[str]:
        """Which of `image_ids` are stored."""
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
    campaign_loads: CampaignLoads
    participation: ParticipationRepository
    profiles: ProfileRepository
    route_trees: RouteTreeRepository
    prize_images: PrizeImageRepository
    content: ContentRepository
    join_codes: JoinCodeRepository
    seeds: SeedRepository
    audit: AuditLog  # the configuration's chain
    tickets: TicketRepository
    flash_sales: FlashSaleRepository
    scheduled: ScheduledDraws
