"""Queued draws: tickets accepted through the broker and drawn in acceptance order, on the
embedded default over HTTP, and on PostgreSQL and RabbitMQ with the consumer killed twice."""

from __future__ import annotations

import asyncio
import gc
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from raffle.bootstrap import Raffle
from raffle.domain.campaign import Campaign
from raffle.domain.quota import QuotaPack
from raffle.domain.tickets import Ticket, TicketState
from raffle.entrypoints.http.app import create_app
from raffle.entrypoints.worker import Parts
from raffle.service.auth import create_user
from raffle.service.draw import Draw
from raffle.service.queued_draws import accept
from raffle.settings import Settings
from tests.integration.delivery_world import fresh_queues
from tests.integration.payment_world import eventually, working
from tests.integration.raffles import ACTIVITY, PRIZE, WELCOME, campaign, wired

DRAWS = f"/api/activities/{ACTIVITY}/draws"
CHANCES = 10


class Crash(BaseException):
    """The process dies here: nothing after it runs, no handler catches it."""


def queued(stock: int = 100) -> Campaign:
    loaded = campaign(rate="0.5", stock=stock, pack=QuotaPack(WELCOME, CHANCES, CHANCES, CHANCES))
    return replace(loaded, activities=(replace(loaded.activities[0], queued=True),))


async def _player(api: httpx.AsyncClient, raffle: Raffle, name: str) -> dict[str, str]:
    await create_user(name, "a long password", False, raffle.uow(), raffle.hasher)
    login = await api.post("/api/auth/login", json={"name": name, "password": "a long password"})
    return {"Authorization": f"Bearer {login.json()['token']}"}


@pytest.fixture
async def embedded(tmp_path: Path) -> AsyncIterator[tuple[Raffle, httpx.AsyncClient]]:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path}/raffle.db",
        queue_bound=3,
        publish_timeout_seconds=0.5,
        republish_after_seconds=1.0,
    )
    raffle = await wired(settings, queued())
    app = create_app(raffle, scheduler=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://raffle") as api:
        yield raffle, api
    await raffle.close()


async def test_a_queued_draw_answers_202_and_a_ticket_its_owner_polls_to_the_result(
    embedded: tuple[Raffle, httpx.AsyncClient],
) -> None:
    raffle, api = embedded
    alice = await _player(api, raffle, "alice")
    bob = await _player(api, raffle, "bob")
    async with working(raffle):
        sent = await api.post(DRAWS, headers={**alice, "Idempotency-Key": "k1"})
        assert sent.status_code == 202, sent.text
        body = sent.json()
        ticket = body["ticket"]
        assert (body["state"], body["activity_id"]) == ("queued", ACTIVITY)
        assert body["position"] >= 1
        path = f"/api/activities/{ACTIVITY}/tickets/{ticket}"
        assert sent.headers["location"] == path
        again = await api.post(DRAWS, headers={**alice, "Idempotency-Key": "k1"})
        assert (again.status_code, again.json()["ticket"]) == (202, ticket)
        assert again.headers["idempotent-replayed"] == "true"

        async def drawn() -> bool:
            return (await api.get(path, headers=alice)).status_code == 200

        await eventually(drawn)
        result = (await api.get(path, headers=alice)).json()
        assert result["draw_count"] == 1  # the replayed request drew nothing more
        assert result["receipt"]["order_id"] == result["order_id"]
        assert result["award_id"] in (1, PRIZE)
        history = (await api.get(DRAWS, headers=alice)).json()
        assert [d["order_id"] for d in history["draws"]] == [result["order_id"]]
        # Owner only: another player, and nobody signed in, do not see it.
        other = await api.get(path, headers=bob)
        assert (other.status_code, other.json()["code"]) == (404, "unknown_ticket")
        assert (await api.get(path)).status_code == 401
        unknown = await api.get(f"/api/activities/{ACTIVITY}/tickets/t00", headers=alice)
        assert unknown.json()["code"] == "unknown_ticket"
        elsewhere = await api.get(f"/api/activities/9/tickets/{ticket}", headers=alice)
        assert elsewhere.status_code == 404


async def test_a_full_queue_refuses_with_retry_after_and_a_stalled_ticket_is_drawn_later(
    embedded: tuple[Raffle, httpx.AsyncClient],
) -> None:
    """No consumer runs: each publish goes unconfirmed (the ticket is kept, answered 202);
    the fourth is refused at the bound of three, changing nothing. A worker then started
    draws all three, the republish job waking the queue."""
    raffle, api = embedded
    alice = await _player(api, raffle, "alice")
    tickets = []
    for _ in range(3):
        sent = await api.post(DRAWS, headers=alice)
        assert sent.status_code == 202, sent.text
        tickets.append(sent.json()["ticket"])
    assert [t["position"] for t in [sent.json()]] == [3]
    full = await api.post(DRAWS, headers=alice)
    assert (full.status_code, full.json()["code"]) == (503, "queue_full")
    assert full.headers["retry-after"] == "5"
    async with raffle.uow() as uow:
        assert await uow.tickets.drawn_upto(ACTIVITY) == 0
        assert len(await uow.tickets.waiting(ACTIVITY, 10)) == 3
    async with working(raffle):

        async def all_drawn() -> bool:
            for t in tickets:
                answer = await api.get(f"/api/activities/{ACTIVITY}/tickets/{t}", headers=alice)
                if answer.status_code != 200:
                    return False
            return True

        await eventually(all_drawn)
    counts = []
    for t in tickets:
        answer = await api.get(f"/api/activities/{ACTIVITY}/tickets/{t}", headers=alice)
        counts.append(answer.json()["draw_count"])
    assert counts == [1, 2, 3]  # in the order accepted


async def test_a_ticket_refused_at_its_draw_answers_the_draws_problem(
    embedded: tuple[Raffle, httpx.AsyncClient],
) -> None:
    raffle, api = embedded
    alice = await _player(api, raffle, "alice")
    async with raffle.shards.for_user("alice") as uow:  # the welcome pack, spent elsewhere
        await uow.quotas.open("alice", ACTIVITY, QuotaPack(WELCOME, 0, 0, 0))
        await uow.commit()
    async with working(raffle):
        sent = await api.post(DRAWS, headers=alice)
        path = sent.headers["location"]

        async def settled() -> bool:
            return (await api.get(path, headers=alice)).status_code != 202

        await eventually(settled)
        refused = await api.get(path, headers=alice)
    assert (refused.status_code, refused.json()["code"]) == (409, "no_chances")


# -- PostgreSQL and RabbitMQ: 5,000 tickets, the consumer killed twice --------------------

USERS = 500
EXTRA = 50  # users who send an eleventh ticket, to be refused for want of a chance
STOCK = 1000


@pytest.fixture
async def rabbit_settings(
    make_database_url: Callable[[str], Awaitable[str]], rabbitmq_url: str
) -> AsyncIterator[Settings]:
    await fresh_queues(rabbitmq_url)
    yield Settings(
        database_url=await make_database_url("postgres"),
        shard_urls=await make_database_url("postgres"),
        shard_tables=4,
        broker_url=rabbitmq_url,
        delivery_attempts=20,
        publish_timeout_seconds=2.0,
        republish_after_seconds=3.0,
        queue_batch=100,
    )
    await fresh_queues(rabbitmq_url)


async def _accept_all(raffle: Raffle) -> list[Ticket]:
    """Every user's tickets, one after another, the users at once."""

    async def one_user(n: int) -> list[Ticket]:
        mine = []
        for _ in range(CHANCES + (n < EXTRA)):
            queued = await accept(
                Draw(f"u{n:04d}", ACTIVITY), catalogue=raffle.catalogue, config=raffle.uow,
                broker=raffle.broker, clock=raffle.clock, queue=raffle.queue(),
            )  # fmt: skip
            mine.append(queued.ticket)
        return mine

    found = await asyncio.gather(*(one_user(n) for n in range(USERS)))
    return [t for mine in found for t in mine]


def _crashing(point: str, after: int, crashed: asyncio.Event) -> Callable[[str], Awaitable[None]]:
    """A fault that kills the consumer at `point` once `after` tickets were drawn."""
    drawn = [0]

    async def fault(where: str) -> None:
        if where == "queued.drawn":
            drawn[0] += 1
        if where == point and drawn[0] >= after and not crashed.is_set():
            crashed.set()
            raise Crash(where)

    return fault


async def _consume_until_killed(settings: Settings, point: str, after: int) -> None:
    raffle = await wired(settings, queued(STOCK))
    crashed = asyncio.Event()
    fault = _crashing(point, after, crashed)
    try:
        async with working(raffle, parts=Parts(relay=False, jobs=False), fault=fault):
            await asyncio.wait_for(crashed.wait(), 120)
    finally:
        await raffle.close()
        gc.collect()


async def _queued_left(raffle: Raffle) -> int:
    async with raffle.uow() as uow:
        return len(await uow.tickets.waiting(ACTIVITY, 10**9))


@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_5000_tickets_through_rabbitmq_resolve_once_in_order_across_two_crashes(
    rabbit_settings: Settings,
) -> None:
    api = await wired(rabbit_settings, queued(STOCK))
    try:
        accepting = asyncio.create_task(_accept_all(api))
        # Killed mid-drain (a draw committed, its ticket not settled), then after a drain
        # before its acks; the acceptances go on meanwhile.
        await _consume_until_killed(rabbit_settings, "queued.drawn", 1200)
        await _consume_until_killed(rabbit_settings, "consumer.before_ack", 1500)
        tickets = await accepting
        assert len(tickets) == USERS * CHANCES + EXTRA
        last = await wired(rabbit_settings, queued(STOCK))
        try:
            async with working(last, parts=Parts(relay=False, jobs=False)):
                await eventually(lambda: _none_left(last), within=180)
        finally:
            await last.close()
        await _check(api, tickets)
    finally:
        await api.close()


async def _none_left(raffle: Raffle) -> bool:
    return await _queued_left(raffle) == 0


async def _check(raffle: Raffle, accepted: list[Ticket]) -> None:
    async with raffle.uow() as uow:
        tickets = [await uow.tickets.get(t.ticket) for t in accepted]
    settled = sorted((t for t in tickets if t is not None), key=lambda t: t.seq)
    assert len(settled) == len(accepted)
    assert [t.seq for t in settled] == list(range(1, len(accepted) + 1))
    by_user: dict[str, list[Ticket]] = defaultdict(list)
    for t in settled:
        by_user[t.user_id].append(t)
    now = datetime.now(UTC)
    activity = await raffle.catalogue.activity(ACTIVITY)
    day, month = activity.periods(now)
    created: dict[str, datetime] = {}
    prizes = 0
    for user, mine in by_user.items():
        states = [t.state for t in mine]
        # Each user's tickets in acceptance order: ten drawn, then the eleventh refused.
        assert states[:CHANCES] == [TicketState.DRAWN] * CHANCES
        assert [(t.state, t.refusal) for t in mine[CHANCES:]] == [
            (TicketState.REFUSED, "no_chances")
        ] * (len(mine) - CHANCES)
        async with raffle.shards.for_user(user) as uow:
            orders = await uow.orders.history(user, ACTIVITY, None, 100)
            account = await uow.quotas.get(user, ACTIVITY, day, month)
        # One order per drawn ticket, keyed by it, numbered in acceptance order.
        by_key = {o.request_key: (o, w) for o, w in orders}
        assert len(orders) == CHANCES == len(by_key)
        drawn = mine[:CHANCES]
        assert set(by_key) == {t.ticket for t in drawn}
        assert [by_key[t.ticket][0].order_id for t in drawn] == [t.order_id for t in drawn]
        assert [by_key[t.ticket][0].draw_count for t in drawn] == list(range(1, CHANCES + 1))
        assert account is not None
        assert (account.total_left, account.draws) == (0, CHANCES)
        for t in drawn:
            created[t.ticket] = by_key[t.ticket][0].created_at
        prizes += sum(w.award_id == PRIZE for _, w in orders)
    # Drawn one after another in acceptance order, whichever consumer drew them.
    times = [created[t.ticket] for t in settled if t.ticket in created]
    assert times == sorted(times)
    assert prizes <= STOCK
