"""The registry of deliverers: what delivering a win means for each award kind
(docs/architecture.md#deliverers).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from raffle.domain.awards import AwardKind
from raffle.domain.delivery import Grant
from raffle.service import effects
from raffle.service.catalogue import Catalogue
from raffle.service.points import earn
from raffle.service.ports import (
    UNMEASURED,
    ChanceHints,
    Clock,
    Metrics,
    Shards,
    ShardUnitOfWork,
    UnitOfWork,
)
from raffle.service.quotas import PackCredit, credit_pack, credit_packs
from raffle.service.refusals import crediting


@dataclass(frozen=True, slots=True)
class DeliveryContext:
    """What deliverers may use besides the user's unit of work."""

    catalogue: Catalogue
    config: Callable[[], UnitOfWork]
    shards: Shards
    clock: Clock
    hints: ChanceHints
    metrics: Metrics = UNMEASURED  # counts each delivery attempt, by kind and result


Effect = Callable[[ShardUnitOfWork], Awaitable[None]]
Deliverer = Callable[[Grant, DeliveryContext], Awaitable[Effect]]


async def _nothing(uow: ShardUnitOfWork) -> None:
    return None


async def thanks(grant: Grant, ctx: DeliveryContext) -> Effect:
    """Nothing to hand over: the record is just completed."""
    return _nothing


async def chances(grant: Grant, ctx: DeliveryContext) -> Effect:
    """Credit the chances of the SKU named by the award's config, as a top-up whose
    `out_business_no` is derived from the order id (a repeat credits nothing). The prize's
    own stock was taken at the draw, so the SKU's stock for sale is not touched. An account
    it opens (the SKU may sell another activity's chances) gets the welcome pack first."""
    sku = await ctx.catalogue.sku(int(grant.award.config))
    pack = await ctx.catalogue.pack(sku.pack_id)
    activity = await ctx.catalogue.activity(sku.activity_id)
    # The account the prize was drawn from exists: no read for a welcome pack it is owed.
    drawn_here = activity.id == grant.activity_id
    welcome = None if drawn_here else await ctx.catalogue.welcome(activity)
    out_business_no = f"award:{grant.order_id}"
    return ChancesCredit(
        PackCredit(
            grant.user_id, activity, sku.sku, pack, welcome, out_business_no, ctx.clock.now()
        )
    )


@dataclass(frozen=True, slots=True)
class ChancesCredit:
    """The chances effect; a batch's credits are written together (`together`)."""

    credit: PackCredit

    async def __call__(self, uow: ShardUnitOfWork) -> None:
        c = self.credit
        await credit_pack(
            uow,
            user_id=c.user_id,
            activity=c.activity,
            sku=c.sku,
            pack=c.pack,
            welcome=c.welcome,
            out_business_no=c.out_business_no,
            now=c.now,
        )

    @staticmethod
    async def together(uow: ShardUnitOfWork, effects: Sequence[ChancesCredit]) -> None:
        await credit_packs(uow, [effect.credit for effect in effects])


def crediting_of(
    effects: Sequence[Effect], ctx: DeliveryContext
) -> AbstractAsyncContextManager[None]:
    """To hold around the transaction that writes `effects` and its commit: the accounts
    they credit chances to (service/refusals.py)."""
    holders = {e.credit.holder for e in effects if isinstance(e, ChancesCredit)}
    return crediting(ctx.hints, holders, ctx.clock)


Together = Callable[[ShardUnitOfWork, Sequence[Effect]], Awaitable[None]]


def together_of(effect: Effect) -> Together | None:
    """How the effects of one kind are written at once, when the kind can: effects with the
    same `together` in one shard transaction are handed to it in one call instead of each
    being called. It must do exactly what calling each would (the same rows, the same
    idempotency), in the order given."""
    together: Together | None = getattr(effect, "together", None)
    return together


async def points(grant: Grant, ctx: DeliveryContext) -> Effect:
    """Credit the points account: the award's fixed amount, or for random points the
    amount drawn with the win. The points order's `out_business_no` is derived from the
    order id, so a repeat credits nothing; a draw of 0 points credits nothing at all."""
    amount = grant.points if grant.award.kind is AwardKind.RANDOM_POINTS else None
    amount = int(grant.award.config) if amount is None else amount
    now = ctx.clock.now()

    async def credit(uow: ShardUnitOfWork) -> None:
        if amount > 0:
            await earn(
                uow,
                user_id=grant.user_id,
                amount=amount,
                out_business_no=f"award-{grant.order_id}",
                reason="award",
                now=now,
            )

    return credit


EffectFunction = Callable[..., Awaitable[None]]


def _in_transaction(deliver: EffectFunction) -> Deliverer:
    """A deliverer whose whole work is an effect in the shard transaction (service/effects.py)."""

    async def deliverer(grant: Grant, ctx: DeliveryContext) -> Effect:
        now = ctx.clock.now()

        async def effect(uow: ShardUnitOfWork) -> None:
            await deliver(
                uow, order_id=grant.order_id, user_id=grant.user_id, award=grant.award, now=now
            )

        return effect

    return deliverer


# The one place a kind is wired to its deliverer.
DELIVERERS: dict[AwardKind, Deliverer] = {
    AwardKind.THANKS: thanks,
    AwardKind.CHANCES: chances,
    AwardKind.POINTS: points,
    AwardKind.RANDOM_POINTS: points,
    AwardKind.COUPON: _in_transaction(effects.deliver_coupon),
    AwardKind.CONTENT: _in_transaction(effects.deliver_content),
    AwardKind.PHYSICAL: _in_transaction(effects.deliver_physical),
}
