"""Wins delivered exactly once through RabbitMQ and PostgreSQL, whatever crashes where."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from raffle.bootstrap import Raffle
from raffle.domain.awards import AwardKind
from raffle.domain.draws import DeliveryError, WinState
from raffle.entrypoints import worker
from raffle.service import deliverers
from raffle.service.deliverers import DeliveryContext, Effect
from raffle.service.delivery import failed_deliveries, resend
from raffle.service.delivery_report import delivery_report
from raffle.service.draw import Draw, draw
from raffle.service.drawing import DrawsAlone
from raffle.service.ports import ShardUnitOfWork
from raffle.settings import Settings
from tests.integration.delivery_world import (
    ACTIVITY,
    POISON,
    delivery_campaign,
    drained,
    draw_wins,
    effects_match_facts,
    fresh_queues,
    pipeline,
)
from tests.services import RabbitMQServer

MakeSettings = Callable[..., Awaitable[Settings]]


class Crash(BaseException):
    """The process dies here: nothing after it runs, no handler catches it."""


@pytest.fixture
async def make_settings(
    make_database_url: Callable[[str], Awaitable[str]], rabbitmq_url: str
) -> MakeSettings:
    await fresh_queues(rabbitmq_url)

    async def make(**overrides: object) -> Settings:
        first, second = await make_database_url("postgres"), await make_database_url("postgres")
        values: dict[str, object] = {
            "database_url": first,
            "shard_urls": second,
            "shard_tables": 4,
            "broker_url": rabbitmq_url,
            "publish_timeout_seconds": 2.0,
            "republish_after_seconds": 3.0,
        }
        return Settings(**{**values, **overrides})  # type: ignore[arg-type]

    return make


@contextlib.asynccontextmanager
async def running(raffle: Raffle, **run: object) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(worker.run(raffle, **run))  # type: ignore[arg-type]
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Crash, BaseExceptionGroup):
            await task


async def test_every_win_is_delivered_once(make_settings: MakeSettings) -> None:
    settings = await make_settings()
    raffle = await pipeline(settings, delivery_campaign())
    try:
        orders = await draw_wins(raffle, users=40, each=5)
        async with running(raffle):
            found = await drained(raffle, len(orders), within=30)
        assert (found.completed, found.delivered, found.failed) == (200, 200, 0)
        assert found.unpublished == 0
        await effects_match_facts(raffle, users=40, each=5)
        prizes = await delivery_report(ACTIVITY, catalogue=raffle.catalogue, shards=raffle.shards)
        assert {p.kind for p in prizes} == {"chances", "thanks"}
        assert sum(p.delivered for p in prizes) == 200
        assert all(p.consistent and p.completed == p.records for p in prizes)
    finally:
        await raffle.close()


# A crash abandons what the process was doing: here the other parts are cancelled mid-statement,
# and a connection they held may only be found unclosed when collected.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize(
    "point",
    ["relay.claimed", "relay.published", "delivery.before_commit", "consumer.before_ack"],
)
async def test_a_crash_at_any_point_loses_and_duplicates_nothing(
    make_settings: MakeSettings, point: str
) -> None:
    """The process dies at `point` (after committing the claim, after publishing before
    marking, with the effect written but not committed, after the effect before the ack);
    a new process then drains: effects = facts, nothing twice."""
    settings = await make_settings()
    loaded = delivery_campaign()
    first = await pipeline(settings, loaded)
    crashed = asyncio.Event()

    async def fault(where: str) -> None:
        if where == point and not crashed.is_set():
            crashed.set()
            raise Crash(where)

    try:
        orders = await draw_wins(first, users=20, each=3)
        async with running(first, fault=fault):
            await asyncio.wait_for(crashed.wait(), 20)
    finally:
        await first.close()  # the dead process's connections go with it: unacked return
        gc.collect()  # what it abandoned is collected here, not in a later test
    again = await pipeline(settings)
    try:
        async with running(again):
            found = await drained(again, len(orders), within=30)
        assert (found.completed, found.delivered, found.failed) == (60, 60, 0)
        assert found.unpublished == 0
        await effects_match_facts(again, users=20, each=3)
    finally:
        await again.close()


async def test_a_poison_message_is_dead_lettered_after_k_attempts_and_reported(
    make_settings: MakeSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PHYSICAL has no deliverer yet: its wins fail k times, land in the dead-letter queue
    and are marked failed, while the other wins keep flowing. Wiring a deliverer and
    sending one again delivers it."""
    settings = await make_settings(delivery_attempts=3)
    raffle = await pipeline(settings, delivery_campaign(chances_rate="0.4", poison_rate="0.2"))
    attempts: dict[str, int] = {}

    original = deliverers.DELIVERERS
    try:
        orders = await draw_wins(raffle, users=30, each=4)

        async def unwired(grant: object, ctx: DeliveryContext) -> Effect:
            key = grant.order_id  # type: ignore[attr-defined]
            attempts[key] = attempts.get(key, 0) + 1
            raise LookupError("no shipping partner yet")

        monkeypatch.setitem(original, AwardKind.PHYSICAL, unwired)
        async with running(raffle):
            found = await drained(raffle, len(orders), within=40)
        failed = await failed_deliveries(raffle.shards, limit=1000)
        assert failed
        assert {w.award_id for w in failed} == {POISON}
        assert found.failed == len(failed)
        assert found.completed == found.delivered == len(orders) - len(failed)
        assert set(attempts.values()) == {3}  # exactly k attempts each
        assert set(attempts) == {w.order_id for w in failed}
        # Why, kept on each record by the attempts themselves: the broker passes no reason.
        why = DeliveryError("internal", "LookupError: no shipping partner yet")
        assert {w.error for w in failed} == {why}

        async def ship(grant: object, ctx: DeliveryContext) -> Effect:
            return deliverers._nothing

        monkeypatch.setitem(original, AwardKind.PHYSICAL, ship)
        again = await resend(failed[0].order_id, raffle.shards, raffle.clock.now())
        assert again.state.value == "create"
        async with running(raffle):
            found = await drained(raffle, len(orders), within=30)
        assert found.failed == len(failed) - 1
        assert found.completed == found.delivered == len(orders) - len(failed) + 1
        async with raffle.shards.for_user(failed[0].user_id) as uow:
            delivered = await uow.wins.get(failed[0].order_id)
        assert delivered is not None
        assert (delivered.state, delivered.error) == (WinState.COMPLETED, None)
    finally:
        await raffle.close()


async def test_a_draw_that_dies_before_its_commit_leaves_nothing_to_deliver(
    make_settings: MakeSettings,
) -> None:
    """The first point of the matrix, on the producing side: the draw's transaction (order,
    award record, outbox message) dies at its commit. Nothing of it is delivered; the wins
    around it all are."""
    settings = await make_settings()
    raffle = await pipeline(settings, delivery_campaign())
    shards = raffle.shards

    class DiesAtCommit:
        """The real shards, whose unit of work for `victim` dies when it commits (each
        draw alone, in these units of work: no batches)."""

        def __init__(self) -> None:
            self.draws = DrawsAlone(self)

        def for_user(self, user_id: str) -> ShardUnitOfWork:
            uow = shards.for_user(user_id)
            if user_id == "victim":

                async def die() -> None:
                    raise Crash("draw.before_commit")

                uow.commit = die  # type: ignore[method-assign]
            return uow

        def every(self) -> list[ShardUnitOfWork]:
            return shards.every()

        def index(self, user_id: str) -> int:
            return shards.index(user_id)

    try:
        with pytest.raises(Crash):
            await draw(
                Draw("victim", ACTIVITY),
                catalogue=raffle.catalogue,
                shards=DiesAtCommit(),
                stock=raffle.stock,
                rng=raffle.rng,
                clock=raffle.clock,
                hints=raffle.hints,
            )
        orders = await draw_wins(raffle, users=20, each=3)
        async with running(raffle):
            found = await drained(raffle, len(orders), within=30)
        assert (found.records, found.completed, found.delivered) == (60, 60, 60)
        await effects_match_facts(raffle, users=20, each=3)
        async with shards.for_user("victim") as uow:
            assert await uow.orders.history("victim", ACTIVITY, None, 10) == []
    finally:
        await raffle.close()


async def test_a_running_worker_outlives_a_broker_restart(
    make_settings: MakeSettings, rabbitmq_server: RabbitMQServer
) -> None:
    """Relay and consumers keep running while the broker restarts: their connection comes
    back, the consumers resume, and the wins drawn meanwhile are delivered too."""
    settings = await make_settings(broker_url=rabbitmq_server.url)
    raffle = await pipeline(settings, delivery_campaign())
    try:
        async with running(raffle):
            orders = await draw_wins(raffle, users=10, each=3)
            await drained(raffle, len(orders), within=30)
            await asyncio.to_thread(rabbitmq_server.restart)
            orders += await draw_wins(raffle, users=10, each=3)
            found = await drained(raffle, len(orders), within=60)
        assert (found.completed, found.delivered, found.failed) == (60, 60, 0)
        await effects_match_facts(raffle, users=10, each=6)
    finally:
        await raffle.close()
