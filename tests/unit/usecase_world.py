"""A small world for use-case tests: one activity on one strategy, fakes all around."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal

from raffle.adapters.chance_hints import MemoryChanceHints
from raffle.adapters.randomness import SeededRandomSource
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award, AwardKind
from raffle.domain.quota import QuotaPack, Sku
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
from raffle.service.catalogue import Catalogue
from raffle.service.draw import Draw, DrawResult, draw
from raffle.service.draw_checks import DrawChecks
from raffle.service.quotas import TopUp, TopUpResult, top_up
from tests.unit.fakes import (
    ConfigStore,
    FakeClock,
    FakePrizeStock,
    FakeShards,
    FakeUnitOfWork,
    RecordingMetrics,
)

ACTIVITY, STRATEGY, PRIZE, THANKS, WELCOME, SKU = 1, 10, 2, 1, 21, 31
WELCOME_PACK = QuotaPack(WELCOME, total=10, day=3, month=30)


@dataclass
class World:
    config: ConfigStore = field(default_factory=ConfigStore)
    shards: FakeShards = field(default_factory=FakeShards)
    stock: FakePrizeStock = field(default_factory=FakePrizeStock)
    clock: FakeClock = field(default_factory=FakeClock)
    rng: SeededRandomSource = field(default_factory=lambda: SeededRandomSource(7))
    hints: MemoryChanceHints = field(default_factory=MemoryChanceHints)
    metrics: RecordingMetrics = field(default_factory=RecordingMetrics)

    def __post_init__(self) -> None:
        self.catalogue = Catalogue(self.uow, ttl=0)

    def uow(self) -> FakeUnitOfWork:
        return FakeUnitOfWork(self.config)

    async def draw(
        self, user: str = "alice", key: str | None = None, checks: DrawChecks | None = None
    ) -> DrawResult:
        return await draw(
            Draw(user, ACTIVITY, key),
            catalogue=self.catalogue,
            shards=self.shards,
            stock=self.stock,
            rng=self.rng,
            clock=self.clock,
            hints=self.hints,
            metrics=self.metrics,
            checks=checks,
            ip="203.0.113.7",
        )

    async def top_up(self, user: str = "alice", business_no: str = "p-1") -> TopUpResult:
        return await top_up(
            TopUp(user, SKU, business_no, open_account=True),
            catalogue=self.catalogue,
            config=self.uow,
            shards=self.shards,
            clock=self.clock,
            hints=self.hints,
        )

    def set_state(self, state: ActivityState) -> None:
        self.config.activities[ACTIVITY] = replace(self.config.activities[ACTIVITY], state=state)


def world(
    rate: str = "0.5",
    stock: int | None = None,
    welcome: QuotaPack | None = WELCOME_PACK,
    sku_stock: int = 100,
    rules: tuple[tuple[str, str], ...] = (),
    prize_rules: tuple[tuple[str, str], ...] = (),
) -> World:
    w = World()
    w.config.awards = {
        THANKS: Award(THANKS, AwardKind.THANKS, "thanks"),
        PRIZE: Award(PRIZE, AwardKind.PHYSICAL, "lamp"),
    }
    prize = StrategyPrize(PRIZE, Decimal(rate), stock=stock, rules=prize_rules)
    w.config.strategies[STRATEGY] = Strategy(STRATEGY, (prize,), Fallback(THANKS), rules)
    w.config.activities[ACTIVITY] = Activity(
        ACTIVITY,
        "demo",
        STRATEGY,
        begin_at=datetime(2026, 1, 1, tzinfo=UTC),
        end_at=datetime(2027, 1, 1, tzinfo=UTC),
        time_zone="Asia/Shanghai",
        state=ActivityState.RUNNING,
        welcome_pack=WELCOME if welcome else None,
    )
    w.config.packs = {WELCOME: welcome or QuotaPack(WELCOME, 0, 0, 0), 22: QuotaPack(22, 5, 5, 5)}
    w.config.skus = {SKU: Sku(SKU, ACTIVITY, 22, sku_stock, 100)}
    w.config.sku_left = {SKU: sku_stock}
    if stock is not None:
        w.stock.levels[STRATEGY, PRIZE] = stock
    return w
