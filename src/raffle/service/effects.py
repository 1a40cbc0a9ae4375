"""Delivering the prizes that are not points or chances: a coupon code, access to content,
a shipment. Each runs inside the delivery's transaction on the winner's shard and has its
effect once per raffle order, however often the order is delivered."""

from __future__ import annotations

from datetime import datetime

from raffle.domain.awards import Award, AwardKind
from raffle.domain.draws import Win
from raffle.domain.fulfilment import AccessGrant, CodePoolEmpty, Shipment
from raffle.service.ports import ShardUnitOfWork


async def deliver_coupon(uow: ShardUnitOfWork, win: Win, award: Award, now: datetime) -> None:
    """Hand the order a code from the pool the award names (its config).

    Expects `uow` open on the winner's shard, in the transaction that then completes the
    award record. The code is bound to the order id in the pool (unique): a redelivery gets
    the same code back and no other order ever gets it, even when the claim committed on the
    pool's database and this transaction did not. Raises CodePoolEmpty when no code is free.
    """
    _expect(win, award, AwardKind.COUPON)
    code = await uow.codes.hand_out(award.config, win.order_id, win.user_id, now)
    if code is None:
        raise CodePoolEmpty(f"code pool {award.config!r} has no free code for {win.order_id}")


async def deliver_content(uow: ShardUnitOfWork, win: Win, award: Award, now: datetime) -> None:
    """Grant the winner access to the content the award names (its config).

    Expects `uow` open on the winner's shard, in the transaction that then completes the
    award record. Granting again — a redelivery, or content the user holds already — is a
    no-op: the grant is keyed by (user, content) and by the order that granted it.
    """
    _expect(win, award, AwardKind.CONTENT)
    await uow.grants.add(AccessGrant(win.user_id, award.config, win.order_id, now))


async def deliver_physical(uow: ShardUnitOfWork, win: Win, award: Award, now: datetime) -> None:
    """Open the order's shipment, awaiting the player's address.

    Expects `uow` open on the winner's shard, in the transaction that then completes the
    award record: delivery is complete once the shipment exists, and the shipment's own
    state (awaiting_address -> ready -> shipped) tracks the rest. Idempotent by order id; an
    address the player gave before delivery ran is kept.
    """
    _expect(win, award, AwardKind.PHYSICAL)
    await uow.shipments.open(Shipment.awaiting(win.order_id, win.user_id, award.id, now))


def _expect(win: Win, award: Award, kind: AwardKind) -> None:
    if win.award_id != award.id:
        raise ValueError(f"order {win.order_id} won award {win.award_id}, not {award.id}")
    if award.kind is not kind:
        raise ValueError(f"award {award.id} is {award.kind}, not {kind}")
