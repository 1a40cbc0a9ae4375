"""The catalogue's cache: one load per entry at a time, however many requests want it."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from raffle.domain.activity import Activity, ActivityState
from raffle.service.catalogue import Catalogue
from tests.unit.fakes import FakeActivities, FakeUnitOfWork
from tests.unit.usecase_world import ACTIVITY, world


async def test_requests_finding_an_entry_expired_at_once_share_one_load() -> None:
    config = world().config
    loads = 0

    def uow() -> FakeUnitOfWork:
        nonlocal loads
        loads += 1
        return FakeUnitOfWork(config)

    catalogue = Catalogue(uow, ttl=0)  # every look finds the entry expired
    found = await asyncio.gather(*(catalogue.activity(ACTIVITY) for _ in range(100)))
    assert loads == 1
    assert {a.id for a in found} == {ACTIVITY}
    await catalogue.activity(ACTIVITY)
    assert loads == 2  # once that load is done, the next look loads again


async def test_a_load_in_flight_when_forgotten_is_not_kept() -> None:
    config = world().config
    read, finish = asyncio.Event(), asyncio.Event()

    class SlowActivities(FakeActivities):
        async def get(self, activity_id: int) -> Activity | None:
            found = await super().get(activity_id)
            read.set()
            await finish.wait()  # the load has read, and is not done yet
            return found

    class SlowUnitOfWork(FakeUnitOfWork):
        def _bind(self) -> None:
            super()._bind()
            self.activities = SlowActivities(self.store)

    catalogue = Catalogue(lambda: SlowUnitOfWork(config), ttl=60)
    first = asyncio.ensure_future(catalogue.activity(ACTIVITY))
    await read.wait()
    config.activities[ACTIVITY] = replace(config.activities[ACTIVITY], state=ActivityState.CLOSED)
    catalogue.forget()  # what a process does after changing the configuration
    finish.set()
    assert (await first).state is not ActivityState.CLOSED  # it had read the old one
    assert (await catalogue.activity(ACTIVITY)).state is ActivityState.CLOSED
