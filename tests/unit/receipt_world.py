"""The use-case world with committed seeds: draws that answer with receipts."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from raffle.domain.fairness import ServerSeed
from raffle.domain.quota import QuotaPack
from raffle.domain.receipts import Receipt
from raffle.service.draw import Draw, DrawResult, draw
from raffle.service.fairness import SeedBook
from raffle.service.receipts import verify
from tests.unit.seed_fakes import FakeSeeds, SeededUnitOfWork
from tests.unit.usecase_world import ACTIVITY, WELCOME, World, world

PLENTY = QuotaPack(WELCOME, total=1000, day=1000, month=1000)


class ReceiptWorld:
    def __init__(self, **options: Any) -> None:
        self.w: World = world(welcome=PLENTY, **options)
        self.fake = FakeSeeds({}, {})
        self.seeds = SeedBook(self.uow, ttl=60)

    def uow(self) -> SeededUnitOfWork:
        return SeededUnitOfWork(self.w.config, self.fake)

    async def draw(self, user: str) -> DrawResult:
        w = self.w
        return await draw(
            Draw(user, ACTIVITY, None),
            catalogue=w.catalogue, shards=w.shards, stock=w.stock, rng=w.rng, clock=w.clock,
            hints=w.hints, seeds=self.seeds,
        )  # fmt: skip

    def seed(self, receipt: Receipt) -> ServerSeed:
        return self.fake.seeds[receipt.activity_id, receipt.period]

    async def differences(self, receipt: Receipt) -> list[str]:
        """What differs, checked after every period so far is over (the seeds revealed)."""
        later = self.w.clock.now() + timedelta(days=3)
        verdict = await verify(
            receipt, config=self.uow, catalogue=self.w.catalogue, seeds=self.seeds, now=later
        )
        assert verdict.revealed
        return list(verdict.differs)
