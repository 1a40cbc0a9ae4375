"""In-memory fakes of the service ports, for unit tests of use cases.

Each unit of work works on a copy of its store and writes it back on commit, like a
transaction; they are not meant for concurrency tests (those run on real databases).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Self

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.audit import CONFIG_CHAIN, Action, AuditEntry, ChainHead, shard_chain
from raffle.domain.awards import Award
from raffle.domain.content import Content, ContentState
from raffle.domain.delivery import Grant
from raffle.domain.draws import OutboxMessage, RaffleOrder, Win, WinState
from raffle.domain.flash_sales import Sale
from raffle.domain.fulfilment import AccessGrant, Address, PoolStats, Shipment, ShipmentState
from raffle.domain.points import InsufficientPoints, PointsAccount, PointsKind, PointsOrder
from raffle.domain.policies import Counts, Participation
from raffle.domain.prize_claims import ClaimState
from raffle.domain.prize_images import PrizeImage
from raffle.domain.quota import QuotaAccount, QuotaPack, Sku, TopUpOrder
from raffle.domain.rebates import RebateOrder, RebateRule
from raffle.domain.route_trees import RouteTree, TreeVersion
from raffle.domain.strategy import Strategy
from raffle.domain.users import StatusChange, User, UserStatus
from raffle.service.drawing import DrawsAlone
from raffle.service.ports import Credit, Taken
from raffle.service.ports.metrics import Unmeasured


class FakeClock:
    def __init__(self, now: datetime = datetime(2026, 11, 21, 12, tzinfo=UTC)) -> None:
        self.current = now

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)


class _Transaction:
    store: object

    def __init__(self, store: object) -> None:
        self._store = store
        self.commits = 0

    async def __aenter__(self) -> Self:
        self.store = copy.deepcopy(self._store)
        self._bind()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    async def commit(self) -> None:
        self._store.__dict__.update(copy.deepcopy(self.store.__dict__))
        self.commits += 1

    def _bind(self) -> None:
        raise NotImplementedError


class FakeAuditLog:
    """A chain held in a list of its store (committed with it)."""

    def __init__(self, entries: list[AuditEntry], chain: str) -> None:
        self.rows = entries
        self.chain = chain

    async def append(self, actions: Sequence[Action]) -> list[AuditEntry]:
        head, added = await self.head(), []
        for action in actions:
            added.append(entry := AuditEntry.after(head, action))
            head = ChainHead(self.chain, entry.seq, entry.hash)
        self.rows += added
        return added

    async def head(self) -> ChainHead:
        last = self.rows[-1] if self.rows else None
        return ChainHead(self.chain) if last is None else ChainHead(self.chain, last.seq, last.hash)

    async def entries(self, after: int, through: int, limit: int) -> list[AuditEntry]:
        return [e for e in self.rows if after < e.seq <= through][:limit]


# --- configuration ---------------------------------------------------------------------


@dataclass
class ConfigStore:
    awards: dict[int, Award] = field(default_factory=dict)
    strategies: dict[int, Strategy] = field(default_factory=dict)
    activities: dict[int, Activity] = field(default_factory=dict)
    packs: dict[int, QuotaPack] = field(default_factory=dict)
    skus: dict[int, Sku] = field(default_factory=dict)
    sku_left: dict[int, int] = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)
    rebate_rules: dict[tuple[int, str], RebateRule] = field(default_factory=dict)
    # pool -> code -> (order_id, user_id) once handed out
    codes: dict[str, dict[str, tuple[str, str] | None]] = field(default_factory=dict)
    loads: int = 0  # campaign loads committed
    participation: dict[int, Participation] = field(default_factory=dict)
    # name -> every version saved, in order (None: a deletion)
    route_trees: dict[str, list[TreeVersion | None]] = field(default_factory=dict)
    prize_images: dict[str, PrizeImage] = field(default_factory=dict)
    content: dict[str, Content] = field(default_factory=dict)
    audit: list[AuditEntry] = field(default_factory=list)
    flash_sales: dict[int, Sale] = field(default_factory=dict)


class FakeFlashSales:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def add(self, sale: Sale) -> bool:
        if sale.id in self.s.flash_sales:
            return False
        self.s.flash_sales[sale.id] = sale
        return True

    async def all(self) -> list[Sale]:
        return [self.s.flash_sales[i] for i in sorted(self.s.flash_sales)]


class FakePrizeImages:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def add(self, image: PrizeImage, now: datetime) -> None:
        self.s.prize_images.setdefault(image.id, image)

    async def get(self, image_id: str) -> PrizeImage | None:
        return self.s.prize_images.get(image_id)

    async def known(self, image_ids: Collection[str]) -> set[str]:
        return {i for i in image_ids if i in self.s.prize_images}


class FakeContent:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def add(self, content: Content) -> bool:
        if content.id in self.s.content:
            return False
        self.s.content[content.id] = content
        return True

    async def get(self, content_id: str) -> Content | None:
        return self.s.content.get(content_id)

    async def replace(self, content: Content, was: ContentState) -> bool:
        stored = self.s.content.get(content.id)
        if stored is None or stored.state is not was:
            return False
        self.s.content[content.id] = replace(content, created_at=stored.created_at)
        return True

    async def listing(
        self, states: Collection[ContentState] | None, after: str | None, limit: int
    ) -> list[Content]:
        found = [
            c for i, c in sorted(self.s.content.items())
            if (states is None or c.state in states) and (after is None or i > after)
        ]  # fmt: skip
        return found[:limit]

    async def many(self, content_ids: Collection[str]) -> dict[str, Content]:
        return {i: self.s.content[i] for i in content_ids if i in self.s.content}


class FakeRouteTrees:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def get(self, name: str) -> TreeVersion | None:
        return (self.s.route_trees.get(name) or [None])[-1]

    async def all(self) -> list[TreeVersion]:
        return [v[-1] for _, v in sorted(self.s.route_trees.items()) if v[-1] is not None]

    async def last_version(self, name: str) -> int:
        return len(self.s.route_trees.get(name, []))

    async def add(
        self, name: str, version: int, tree: RouteTree | None, saved_by: str, saved_at: datetime
    ) -> bool:
        versions = self.s.route_trees.setdefault(name, [])
        if version != len(versions) + 1:
            return False
        versions.append(None if tree is None else TreeVersion(tree, version, saved_by, saved_at))
        return True


class FakeCampaignLoads:
    """Counts the turns; no lock: the fakes never suspend, so a load runs whole at once."""

    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def take_turn(self) -> None:
        self.s.loads += 1


class FakeCodePools:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def hand_out(self, pool: str, order_id: str, user_id: str, at: datetime) -> str | None:
        if (code := (await self.for_orders([order_id])).get(order_id)) is not None:
            return code
        codes = self.s.codes.get(pool, {})
        free = sorted(code for code, handed in codes.items() if handed is None)
        if not free:
            return None
        codes[free[0]] = (order_id, user_id)
        return free[0]

    async def add(self, pool: str, codes: Sequence[str]) -> int:
        stored = self.s.codes.setdefault(pool, {})
        new = [code for code in dict.fromkeys(codes) if code not in stored]
        stored.update(dict.fromkeys(new))
        return len(new)

    async def stats(self, pools: Collection[str] | None = None) -> list[PoolStats]:
        return [
            PoolStats(name, len(codes), sum(h is not None for h in codes.values()))
            for name, codes in sorted(self.s.codes.items())
            if pools is None or name in pools
        ]

    async def for_orders(self, order_ids: Collection[str]) -> dict[str, str]:
        return {
            handed[0]: code
            for codes in self.s.codes.values()
            for code, handed in codes.items()
            if handed is not None and handed[0] in order_ids
        }

    async def free_codes(self) -> dict[str, list[str]]:
        return {
            name: sorted(code for code, handed in codes.items() if handed is None)
            for name, codes in self.s.codes.items()
        }


class FakeAwards:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def save(self, award: Award) -> None:
        self.s.awards[award.id] = award

    async def all(self) -> dict[int, Award]:
        return dict(self.s.awards)


class FakeStrategies:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def save(self, strategy: Strategy) -> None:
        self.s.strategies[strategy.id] = strategy

    async def get(self, strategy_id: int) -> Strategy | None:
        return self.s.strategies.get(strategy_id)

    async def ids(self) -> list[int]:
        return sorted(self.s.strategies)


class FakeActivities:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def save(self, activity: Activity) -> None:
        old = self.s.activities.get(activity.id)
        self.s.activities[activity.id] = replace(activity, state=old.state) if old else activity

    async def get(self, activity_id: int) -> Activity | None:
        return self.s.activities.get(activity_id)

    async def all(self) -> list[Activity]:
        return [self.s.activities[k] for k in sorted(self.s.activities)]

    async def compare_and_set(
        self, activity_id: int, expected: ActivityState, new: ActivityState
    ) -> bool:
        activity = self.s.activities.get(activity_id)
        if activity is None or activity.state is not expected:
            return False
        self.s.activities[activity_id] = replace(activity, state=new)
        return True

    async def using_strategy(self, strategy_id: int) -> list[Activity]:
        return [a for a in self.s.activities.values() if a.strategy_id == strategy_id]


class FakePacks:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def save(self, pack: QuotaPack) -> None:
        self.s.packs[pack.id] = pack

    async def get(self, pack_id: int) -> QuotaPack | None:
        return self.s.packs.get(pack_id)

    async def all(self) -> list[QuotaPack]:
        return [self.s.packs[i] for i in sorted(self.s.packs)]


class FakeSkus:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def save(self, sku: Sku) -> None:
        old = self.s.skus.get(sku.sku)
        sold = old.stock - self.s.sku_left[sku.sku] if old else 0
        self.s.skus[sku.sku] = sku
        self.s.sku_left[sku.sku] = max(0, sku.stock - sold)

    async def get(self, sku: int) -> Sku | None:
        return self.s.skus.get(sku)

    async def for_activity(self, activity_id: int) -> list[Sku]:
        return [s for s in self.s.skus.values() if s.activity_id == activity_id]

    async def all(self) -> list[Sku]:
        return [self.s.skus[i] for i in sorted(self.s.skus)]

    async def stock_left(self, sku: int) -> int:
        return self.s.sku_left.get(sku, 0)

    async def take(self, sku: int) -> bool:
        if self.s.sku_left.get(sku, 0) <= 0:
            return False
        self.s.sku_left[sku] -= 1
        return True

    async def give_back(self, sku: int) -> None:
        self.s.sku_left[sku] = min(self.s.skus[sku].stock, self.s.sku_left[sku] + 1)


class FakeUsers:
    def __init__(self, rows: dict[str, User], changed: list[StatusChange] | None = None) -> None:
        self.rows = rows
        self.changed = [] if changed is None else changed  # oldest first

    async def add(self, user: User) -> bool:
        if user.id in self.rows:
            return False
        self.rows[user.id] = user
        return True

    async def get(self, user_id: str) -> User | None:
        return self.rows.get(user_id)

    async def many(self, user_ids: Collection[str]) -> dict[str, User]:
        return {u: self.rows[u] for u in user_ids if u in self.rows}

    async def first(self, limit: int) -> list[User]:
        return [self.rows[name] for name in sorted(self.rows)[:limit]]

    async def count(self) -> int:
        return len(self.rows)

    async def set_status(self, user_id: str, status: UserStatus) -> bool:
        return self._update(user_id, status=status)

    async def set_password_hash(self, user_id: str, password_hash: str) -> bool:
        return self._update(user_id, password_hash=password_hash)

    async def record(self, change: StatusChange) -> None:
        self.changed.append(change)

    async def changes(self, user_id: str, limit: int) -> list[StatusChange]:
        return [c for c in reversed(self.changed) if c.user_id == user_id][:limit]

    def _update(self, user_id: str, **values: Any) -> bool:
        if user_id not in self.rows:
            return False
        self.rows[user_id] = replace(self.rows[user_id], **values)
        return True


class FakeRebateRules:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def save(self, rule: RebateRule) -> None:
        self.s.rebate_rules[rule.activity_id, rule.behaviour] = rule

    async def for_activity(self, activity_id: int) -> list[RebateRule]:
        return [r for (a, _), r in sorted(self.s.rebate_rules.items()) if a == activity_id]

    async def all(self) -> list[RebateRule]:
        return [r for _, r in sorted(self.s.rebate_rules.items())]


class FakeParticipation:
    def __init__(self, store: ConfigStore) -> None:
        self.s = store

    async def get(self, activity_id: int) -> Participation:
        return self.s.participation.get(activity_id) or Participation(activity_id)

    async def save(self, participation: Participation) -> None:
        self.s.participation[participation.activity_id] = participation


class FakeUnitOfWork(_Transaction):
    store: ConfigStore

    def __init__(self, store: ConfigStore | None = None) -> None:
        super().__init__(store or ConfigStore())

    @property
    def committed(self) -> ConfigStore:
        assert isinstance(self._store, ConfigStore)
        return self._store

    def _bind(self) -> None:
        self.awards = FakeAwards(self.store)
        self.strategies = FakeStrategies(self.store)
        self.activities = FakeActivities(self.store)
        self.packs = FakePacks(self.store)
        self.skus = FakeSkus(self.store)
        self.users = FakeUsers(self.store.users)
        self.rebate_rules = FakeRebateRules(self.store)
        self.code_pools = FakeCodePools(self.store)
        self.campaign_loads = FakeCampaignLoads(self.store)
        self.participation = FakeParticipation(self.store)
        self.route_trees = FakeRouteTrees(self.store)
        self.prize_images = FakePrizeImages(self.store)
        self.content = FakeContent(self.store)
        self.audit = FakeAuditLog(self.store.audit, CONFIG_CHAIN)
        self.flash_sales = FakeFlashSales(self.store)


# --- the user dimension ----------------------------------------------------------------


@dataclass
class ShardStore:
    accounts: dict[tuple[str, int], list[int]] = field(
        default_factory=dict
    )  # total, left, day, month
    days: dict[tuple[str, int, str], int] = field(default_factory=dict)
    months: dict[tuple[str, int, str], int] = field(default_factory=dict)
    top_ups: dict[tuple[str, str], int] = field(default_factory=dict)
    orders: dict[str, RaffleOrder] = field(default_factory=dict)
    wins: dict[str, Win] = field(default_factory=dict)
    outbox: list[OutboxMessage] = field(default_factory=list)
    points: dict[str, PointsAccount] = field(default_factory=dict)
    points_orders: dict[tuple[str, str], PointsOrder] = field(default_factory=dict)
    rebates: dict[tuple[str, int, str, str], RebateOrder] = field(default_factory=dict)
    grants: dict[tuple[str, str], AccessGrant] = field(default_factory=dict)
    shipments: dict[str, Shipment] = field(default_factory=dict)
    deliveries: dict[str, Grant] = field(default_factory=dict)
    counters: dict[tuple[str, int, str], Counts] = field(default_factory=dict)
    prize_claims: dict[str, tuple[str, ClaimState]] = field(default_factory=dict)
    audit: list[AuditEntry] = field(default_factory=list)


class FakeQuotas:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def get(
        self, user_id: str, activity_id: int, day: str, month: str
    ) -> QuotaAccount | None:
        row = self.s.accounts.get((user_id, activity_id))
        if row is None:
            return None
        total, left, day_allowance, month_allowance = row
        return QuotaAccount(
            user_id, activity_id, total, left,
            day_allowance, self.s.days.get((user_id, activity_id, day), day_allowance),
            month_allowance, self.s.months.get((user_id, activity_id, month), month_allowance),
        )  # fmt: skip

    async def open(self, user_id: str, activity_id: int, pack: QuotaPack | None) -> bool:
        if (user_id, activity_id) in self.s.accounts:
            return False
        p = pack or QuotaPack(0, 0, 0, 0)
        self.s.accounts[user_id, activity_id] = [p.total, p.total, p.day, p.month]
        return True

    async def credit(
        self, user_id: str, activity_id: int, pack: QuotaPack, day: str, month: str
    ) -> None:
        await self.open(user_id, activity_id, None)
        row = self.s.accounts[user_id, activity_id]
        row[0] += pack.total
        row[1] += pack.total
        row[2] += pack.day
        row[3] += pack.month
        if (user_id, activity_id, day) in self.s.days:
            self.s.days[user_id, activity_id, day] += pack.day
        if (user_id, activity_id, month) in self.s.months:
            self.s.months[user_id, activity_id, month] += pack.month

    async def credit_many(self, credits: Sequence[Credit]) -> None:
        for credit in credits:
            await self.credit(*credit)

    async def consume(
        self, user_id: str, activity_id: int, day: str, month: str
    ) -> QuotaAccount | None:
        account = await self.get(user_id, activity_id, day, month)
        if account is None or account.chances == 0:
            return None
        self.s.accounts[user_id, activity_id][1] -= 1
        self.s.days[user_id, activity_id, day] = account.day_left - 1
        self.s.months[user_id, activity_id, month] = account.month_left - 1
        return await self.get(user_id, activity_id, day, month)


class FakeTopUps:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def add(
        self, *, order_id: str, user_id: str, activity_id: int, sku: int,
        out_business_no: str, pack: QuotaPack, at: datetime,
    ) -> bool:  # fmt: skip
        if (user_id, out_business_no) in self.s.top_ups:
            return False
        self.s.top_ups[user_id, out_business_no] = sku
        return True

    async def add_many(self, orders: Sequence[TopUpOrder]) -> set[str]:
        return {
            o.order_id
            for o in orders
            if await self.add(
                order_id=o.order_id, user_id=o.user_id, activity_id=o.activity_id, sku=o.sku,
                out_business_no=o.out_business_no, pack=o.pack, at=o.at,
            )
        }  # fmt: skip

    async def exists(self, user_id: str, out_business_no: str) -> bool:
        return (user_id, out_business_no) in self.s.top_ups


class FakeOrders:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def add(self, order: RaffleOrder) -> None:
        self.s.orders[order.order_id] = order

    async def by_request(self, user_id: str, request_key: str) -> RaffleOrder | None:
        return next(
            (
                o
                for o in self.s.orders.values()
                if (o.user_id, o.request_key) == (user_id, request_key)
            ),
            None,
        )

    async def per_minute(self, activity_id: int, since: datetime) -> dict[datetime, int]:
        minutes = Counter(
            o.created_at.replace(second=0, microsecond=0)
            for o in self.s.orders.values()
            if o.activity_id == activity_id and o.created_at >= since
        )
        return dict(minutes)

    async def history(
        self, user_id: str, activity_id: int | None, before: str | None, limit: int
    ) -> Sequence[tuple[RaffleOrder, Win]]:
        mine = sorted(
            (
                o
                for o in self.s.orders.values()
                if o.user_id == user_id and activity_id in (None, o.activity_id)
            ),
            key=lambda o: o.order_id,
            reverse=True,
        )
        return [
            (o, self.s.wins[o.order_id]) for o in mine if before is None or o.order_id < before
        ][:limit]


class FakeWins:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def add(self, win: Win) -> None:
        self.s.wins[win.order_id] = win

    async def get(self, order_id: str) -> Win | None:
        return self.s.wins.get(order_id)

    async def count(self, strategy_id: int, award_id: int) -> int:
        return sum(
            (w.strategy_id, w.award_id) == (strategy_id, award_id) for w in self.s.wins.values()
        )

    async def settle(self, order_id: str, expected: WinState, new: WinState) -> bool:
        win = self.s.wins.get(order_id)
        if win is None or win.state is not expected:
            return False
        self.s.wins[order_id] = replace(win, state=new)
        return True


class FakeDeliveries:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def add(self, grant: Grant, at: datetime) -> bool:
        if grant.order_id in self.s.deliveries:
            return False
        self.s.deliveries[grant.order_id] = grant
        return True


class FakeOutbox:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def add(self, message: OutboxMessage) -> None:
        self.s.outbox.append(message)

    async def backlog(self) -> tuple[int, datetime | None]:
        """Nothing is published here: every message waits."""
        oldest = min((m.created_at for m in self.s.outbox), default=None)
        return len(self.s.outbox), oldest


class FakePoints:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def account(self, user_id: str) -> PointsAccount | None:
        return self.s.points.get(user_id)

    async def add(self, order: PointsOrder) -> bool:
        if (order.user_id, order.out_business_no) in self.s.points_orders:
            return False
        account = self.s.points.get(order.user_id, PointsAccount(order.user_id))
        if order.kind is PointsKind.EARN:
            account = replace(
                account, total=account.total + order.amount,
                available=account.available + order.amount,
            )  # fmt: skip
        elif account.available < order.amount:
            raise InsufficientPoints("not enough points")
        else:
            account = replace(account, available=account.available - order.amount)
        self.s.points[order.user_id] = account
        self.s.points_orders[order.user_id, order.out_business_no] = order
        return True

    async def by_business_no(self, user_id: str, out_business_no: str) -> PointsOrder | None:
        return self.s.points_orders.get((user_id, out_business_no))

    async def history(self, user_id: str, before: str | None, limit: int) -> list[PointsOrder]:
        mine = sorted(
            (o for o in self.s.points_orders.values() if o.user_id == user_id),
            key=lambda o: o.order_id,
            reverse=True,
        )
        return [o for o in mine if before is None or o.order_id < before][:limit]


class FakeRebateOrders:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def add(self, order: RebateOrder) -> bool:
        key = (order.user_id, order.activity_id, order.behaviour, order.business_key)
        if key in self.s.rebates:
            return False
        self.s.rebates[key] = order
        return True

    async def get(
        self, user_id: str, activity_id: int, behaviour: str, business_key: str
    ) -> RebateOrder | None:
        return self.s.rebates.get((user_id, activity_id, behaviour, business_key))

    async def keys(
        self, user_id: str, activity_id: int, behaviour: str, first: str, last: str
    ) -> list[str]:
        return sorted(
            k[3] for k in self.s.rebates
            if k[:3] == (user_id, activity_id, behaviour) and first <= k[3] <= last
        )  # fmt: skip


class FakeGrants:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def add(self, grant: AccessGrant) -> bool:
        key = (grant.user_id, grant.content_id)
        if key in self.s.grants or any(
            g.order_id == grant.order_id for g in self.s.grants.values()
        ):
            return False
        self.s.grants[key] = grant
        return True

    async def of_user(self, user_id: str) -> list[AccessGrant]:
        mine = [g for g in self.s.grants.values() if g.user_id == user_id]
        return sorted(mine, key=lambda g: (g.granted_at, g.content_id))

    async def get(self, user_id: str, content_id: str) -> AccessGrant | None:
        return self.s.grants.get((user_id, content_id))


class FakeShipments:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def open(self, shipment: Shipment) -> bool:
        if shipment.order_id in self.s.shipments:
            return False
        self.s.shipments[shipment.order_id] = shipment
        return True

    async def get(self, order_id: str) -> Shipment | None:
        return self.s.shipments.get(order_id)

    async def set_address(self, order_id: str, address: Address, at: datetime) -> bool:
        old = self.s.shipments.get(order_id)
        if old is None or old.state is ShipmentState.SHIPPED:
            return False
        new = replace(old, address=address, state=ShipmentState.READY, updated_at=at)
        self.s.shipments[order_id] = new
        return True

    async def ship(self, order_id: str, tracking: str | None, at: datetime) -> bool:
        old = self.s.shipments.get(order_id)
        if old is None or old.state is not ShipmentState.READY:
            return False
        new = replace(old, state=ShipmentState.SHIPPED, tracking=tracking, updated_at=at)
        self.s.shipments[order_id] = new
        return True

    async def in_state(self, state: ShipmentState, after: str | None, limit: int) -> list[Shipment]:
        found = sorted(
            (s for s in self.s.shipments.values() if s.state is state),
            key=lambda s: s.order_id,
        )
        return [s for s in found if after is None or s.order_id > after][:limit]

    async def for_orders(self, order_ids: Collection[str]) -> dict[str, Shipment]:
        return {o: self.s.shipments[o] for o in order_ids if o in self.s.shipments}


class FakeCounters:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def counts(
        self, user_id: str, activity_id: int, counters: Collection[str]
    ) -> dict[str, Counts]:
        found = ((c, self.s.counters.get((user_id, activity_id, c))) for c in counters)
        return {c: n for c, n in found if n is not None}

    async def add(self, user_id: str, activity_id: int, counters: Mapping[str, Counts]) -> None:
        for c, (joins, wins) in counters.items():
            key = (user_id, activity_id, c)
            had_joins, had_wins = self.s.counters.get(key, (0, 0))
            self.s.counters[key] = (had_joins + joins, had_wins + wins)


class FakePrizeClaims:
    def __init__(self, store: ShardStore) -> None:
        self.s = store

    async def states(self, order_ids: Collection[str]) -> dict[str, ClaimState]:
        return {o: self.s.prize_claims[o][1] for o in order_ids if o in self.s.prize_claims}

    async def record(self, order_id: str, user_id: str, state: ClaimState, at: datetime) -> bool:
        if order_id in self.s.prize_claims:
            return False
        self.s.prize_claims[order_id] = (user_id, state)
        return True

    async def expire(
        self,
        activity_id: int,
        strategy_id: int,
        award_id: int,
        won_after: datetime | None,
        won_before: datetime,
        at: datetime,
    ) -> int:
        found = [
            w
            for w in self.s.wins.values()
            if (w.activity_id, w.strategy_id, w.award_id) == (activity_id, strategy_id, award_id)
            and w.created_at < won_before
            and (won_after is None or w.created_at >= won_after)
            and w.order_id not in self.s.prize_claims
        ]
        for w in found:
            self.s.prize_claims[w.order_id] = (w.user_id, ClaimState.EXPIRED)
        return len(found)


class FakeShardUnitOfWork(_Transaction):
    store: ShardStore

    def __init__(self, store: ShardStore, config: ConfigStore | None = None) -> None:
        super().__init__(store)
        self._config = config or ConfigStore()

    def _bind(self) -> None:
        self.quotas = FakeQuotas(self.store)
        self.top_ups = FakeTopUps(self.store)
        self.orders = FakeOrders(self.store)
        self.wins = FakeWins(self.store)
        self.outbox = FakeOutbox(self.store)
        self.points = FakePoints(self.store)
        self.rebates = FakeRebateOrders(self.store)
        self.grants = FakeGrants(self.store)
        self.shipments = FakeShipments(self.store)
        # Claims commit at once, in the pools' own database (the configuration store).
        self.codes = FakeCodePools(self._config)
        self.deliveries = FakeDeliveries(self.store)
        self.counters = FakeCounters(self.store)
        self.prize_claims = FakePrizeClaims(self.store)
        self.audit = FakeAuditLog(self.store.audit, shard_chain(0, 0))


class FakeShards:
    """One shard is enough for use-case tests; routing is tested on real databases."""

    def __init__(self, config: ConfigStore | None = None) -> None:
        self.store = ShardStore()
        self.config = config or ConfigStore()  # where code pools live
        self.draws = DrawsAlone(self)

    def for_user(self, user_id: str) -> FakeShardUnitOfWork:
        return FakeShardUnitOfWork(self.store, self.config)

    def every(self) -> list[FakeShardUnitOfWork]:
        return [FakeShardUnitOfWork(self.store, self.config)]

    def index(self, user_id: str) -> int:
        return 0


class FakePrizeStock:
    def __init__(self, levels: dict[tuple[int, int], int] | None = None) -> None:
        self.levels = dict(levels or {})
        self.given_back: list[str] = []

    async def prepare(self, strategy_id: int) -> None:
        return None

    async def warm(self, strategy_id: int) -> None:
        return None

    async def take(self, strategy_id: int, award_id: int, order_id: str) -> Taken | None:
        if self.levels.get((strategy_id, award_id), 0) <= 0:
            return None
        self.levels[strategy_id, award_id] -= 1
        return Taken(self.levels[strategy_id, award_id])

    async def give_back(self, strategy_id: int, award_id: int, order_id: str) -> int | None:
        self.levels[strategy_id, award_id] += 1
        self.given_back.append(order_id)
        return self.levels[strategy_id, award_id]

    async def left(self, strategy_id: int, award_id: int) -> int | None:
        return self.levels.get((strategy_id, award_id))


@dataclass
class RecordingMetrics(Unmeasured):
    """What the service reported, by method and arguments; levels as last set."""

    counts: Counter[tuple[object, ...]] = field(default_factory=Counter)
    levels: dict[tuple[object, ...], float] = field(default_factory=dict)

    def drawn(self, activity_id: int, outcome: str) -> None:
        self.counts["drawn", activity_id, outcome] += 1

    def refused_fast(self) -> None:
        self.counts["refused_fast",] += 1

    def delivered(self, kind: str, result: str) -> None:
        self.counts["delivered", kind, result] += 1

    def outbox(self, backlog: int, oldest_seconds: float) -> None:
        self.levels["backlog",] = backlog
        self.levels["oldest",] = oldest_seconds

    def stock_left(self, strategy_id: int, award_id: int, left: int) -> None:
        self.levels["stock", strategy_id, award_id] = left
