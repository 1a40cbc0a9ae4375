"""The delivery use case on fakes: each kind through its deliverer, once; no deliverer, no
silent success."""

from __future__ import annotations

import pytest

from raffle.domain.awards import Award, AwardKind
from raffle.domain.delivery import NotDeliverable, UnknownWin
from raffle.domain.draws import WinState
from raffle.service.deliverers import DELIVERERS, DeliveryContext
from raffle.service.delivery import deliver, give_up, won_message
from tests.unit.usecase_world import ACTIVITY, PRIZE, SKU, THANKS, WELCOME_PACK, World, world


def _context(w: World) -> DeliveryContext:
    return DeliveryContext(w.catalogue, w.uow, w.shards, w.clock, w.hints)


async def _won(w: World, user: str = "alice") -> str:
    result = await w.draw(user)
    return result.order_id


def _message(w: World, order_id: str):  # type: ignore[no-untyped-def]
    return won_message(w.shards.store.wins[order_id], w.clock.now())


async def test_thanks_is_completed_once() -> None:
    w = world(rate="0")  # every draw lands on the fallback: THANKS
    order = await _won(w)
    message = _message(w, order)
    assert await deliver(message, _context(w)) is True
    assert await deliver(message, _context(w)) is False  # a redelivery changes nothing
    assert w.shards.store.wins[order].state is WinState.COMPLETED
    assert list(w.shards.store.deliveries) == [order]


async def test_chances_credit_the_skus_pack_exactly_once() -> None:
    w = world(rate="1")
    w.config.awards[PRIZE] = Award(PRIZE, AwardKind.CHANCES, "five more", str(SKU))
    order = await _won(w)
    message = _message(w, order)
    await deliver(message, _context(w))
    await deliver(message, _context(w))
    total = w.shards.store.accounts["alice", ACTIVITY][0]
    assert total == WELCOME_PACK.total + 5  # the SKU's pack, credited once
    assert w.config.sku_left[SKU] == 100  # a prize does not sell the SKU's stock


@pytest.mark.parametrize(
    ("kind", "config", "credited"),
    [(AwardKind.POINTS, "50", 50), (AwardKind.RANDOM_POINTS, "7,7", 7)],
)
async def test_points_are_credited_once(kind: AwardKind, config: str, credited: int) -> None:
    w = world(rate="1")
    w.config.awards[PRIZE] = Award(PRIZE, kind, "points", config)
    order = await _won(w)
    message = _message(w, order)
    assert await deliver(message, _context(w)) is True
    assert await deliver(message, _context(w)) is False
    account = w.shards.store.points["alice"]
    assert (account.total, account.available) == (credited, credited)
    assert w.shards.store.wins[order].state is WinState.COMPLETED


async def test_a_physical_prize_opens_its_shipment_once() -> None:
    w = world(rate="1")  # PRIZE is PHYSICAL
    order = await _won(w)
    message = _message(w, order)
    assert await deliver(message, _context(w)) is True
    assert await deliver(message, _context(w)) is False
    assert list(w.shards.store.shipments) == [order]
    assert w.shards.store.wins[order].state is WinState.COMPLETED


async def test_every_kind_has_a_deliverer() -> None:
    assert set(DELIVERERS) == set(AwardKind)


async def test_a_kind_with_no_deliverer_fails_and_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(rate="1")  # PRIZE is PHYSICAL: unwired for this test
    monkeypatch.delitem(DELIVERERS, AwardKind.PHYSICAL)
    order = await _won(w)
    with pytest.raises(NotDeliverable):
        await deliver(_message(w, order), _context(w))
    assert w.shards.store.wins[order].state is WinState.CREATE
    assert w.shards.store.deliveries == {}
    assert await give_up(_message(w, order), w.shards) is True  # the dead-letter consumer
    assert w.shards.store.wins[order].state is WinState.FAILED


async def test_a_message_for_no_record_is_refused() -> None:
    w = world(rate="0")
    order = await _won(w)
    message = _message(w, order)
    del w.shards.store.wins[order]
    with pytest.raises(UnknownWin):
        await deliver(message, _context(w))
    assert THANKS in w.config.awards
