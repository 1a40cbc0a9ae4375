"""Delivering the prizes that are not points or chances: a coupon code, access to content,
a shipment. Each runs inside the delivery's transaction on the winner's shard and has its
effect once per raffle order, however often the order is delivered."""

from __future__ import annotations

from datetime import datetime

from raffle.domain.awards import Award, AwardKind
from raffle.domain.fulfilment import AccessGrant, CodePoolEmpty, Shipment
from raffle.service.audit import record
from raffle.service.ports import ShardUnitOfWork


async def deliver_coupon(
    uow: ShardUnitOfWork, *, order_id: str, user_id: str, award: Award, now: datetime
) -> None:
    """Hand the order a code from the pool the award names (its config).

    Expects `uow` open on the winner's shard, in the transaction that then completes the
    award record. The code is bound to the order id in the pool (unique): a redelivery gets
    the same code back and no other order ever gets it, even when the claim committed on the
    pool's database and this transaction did not. Raises CodePoolEmpty when no code is free.
    """
    _expect(award, AwardKind.COUPON)
    if await uow.codes.hand_out(award.config, order_id, user_id, now) is None:
        raise CodePoolEmpty(f"code pool {award.config!r} has no free code for {order_id}")


async def deliver_content(
    uow: ShardUnitOfWork, *, order_id: str, user_id: str, award: Award, now: datetime
) -> None:
    """Grant the winner access to the content the award names (its config).

    Expects `uow` open on the winner's shard, in the transaction that then completes the
    award record. Granting again — a redelivery, or content the user holds already — is a
    no-op: the grant is keyed by (user, content) and by the order that granted it.
    """
    _expect(award, AwardKind.CONTENT)
    await grant_access(uow, AccessGrant(user_id, award.config, order_id, now))


async def grant_access(uow: ShardUnitOfWork, grant: AccessGrant) -> bool:
    """Grant access (False: held already, nothing changed), and append the grant to the
    shard's audit log in the same transaction."""
    if not await uow.grants.add(grant):
        return False
    details = {"user_id": grant.user_id, "order_id": grant.order_id}
    await record(uow.audit, "grant.access", grant.content_id, grant.granted_at, details=details)
    return True


async def deliver_physical(
    uow: ShardUnitOfWork, *, order_id: str, user_id: str, award: Award, now: datetime
) -> None:
    """Open the order's shipment, awaiting the player's address.

    Expects `uow` open on the winner's shard, in the transaction that then completes the
    award record: delivery is complete once the shipment exists, and the shipment's own
    state (awaiting_address -> ready -> shipped) tracks the rest. Idempotent by order id; an
    address the player gave before delivery ran is kept.
    """
    _expect(award, AwardKind.PHYSICAL)
    await uow.shipments.open(Shipment.awaiting(order_id, user_id, award.id, now))


def _expect(award: Award, kind: AwardKind) -> None:
    if award.kind is not kind:
        raise ValueError(f"award {award.id} is {award.kind}, not {kind}")
