"""Chances: topping up a quota account from a SKU, and a user's view of their account."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from raffle.domain.activity import Activity
from raffle.domain.quota import QuotaAccount, QuotaPack, SkuSoldOut, TopUpOrder
from raffle.domain.users import UnknownUser
from raffle.service import ids
from raffle.service.catalogue import Catalogue
from raffle.service.ports import ChanceHints, Clock, Holder, Shards, ShardUnitOfWork, UnitOfWork
from raffle.service.refusals import crediting


@dataclass(frozen=True, slots=True)
class TopUp:
    user_id: str
    sku: int
    out_business_no: str  # the caller's id for this purchase: a repeat credits nothing
    open_account: bool = False  # credit a user id with no user account (else UnknownUser)


@dataclass(frozen=True, slots=True)
class TopUpResult:
    credited: bool  # False: this out_business_no was credited before
    account: QuotaAccount


async def top_up(
    cmd: TopUp,
    *,
    catalogue: Catalogue,
    config: Callable[[], UnitOfWork],
    shards: Shards,
    clock: Clock,
    hints: ChanceHints,
) -> TopUpResult:
    """Credit the SKU's pack to the user's account, once per `out_business_no`; an account
    it opens gets the welcome pack first.

    The SKU's stock lives in the configuration database and the account in the user's
    shard, so they are two transactions: the unit is taken first (guarded, never below
    zero) and given back if the credit does not commit or was a repeat. A user id with no
    account is refused (a mistyped id would credit nobody) unless `open_account` says so.
    """
    sku = await catalogue.sku(cmd.sku)
    if not cmd.open_account:
        async with config() as cfg:
            if await cfg.users.get(cmd.user_id) is None:
                raise UnknownUser(f"user {cmd.user_id!r} has no account; open_account credits it")
    pack = await catalogue.pack(sku.pack_id)
    activity = await catalogue.activity(sku.activity_id)
    welcome = await catalogue.welcome(activity)
    now = clock.now()
    day, month = activity.day(now), activity.month(now)
    async with shards.for_user(cmd.user_id) as uow:
        if await uow.top_ups.exists(cmd.user_id, cmd.out_business_no):
            return TopUpResult(False, await _account(uow, cmd.user_id, activity.id, day, month))
    async with config() as cfg:
        if not await cfg.skus.take(sku.sku):
            raise SkuSoldOut(f"SKU {sku.sku} is sold out")
        await cfg.commit()
    credited = False
    try:
        async with (
            crediting(hints, [(cmd.user_id, activity.id)], clock),
            shards.for_user(cmd.user_id) as uow,
        ):
            credited = await credit_pack(
                uow,
                user_id=cmd.user_id,
                activity=activity,
                sku=sku.sku,
                pack=pack,
                welcome=welcome,
                out_business_no=cmd.out_business_no,
                now=now,
            )
            account = await _account(uow, cmd.user_id, activity.id, day, month)
            if credited:
                await uow.commit()
    finally:
        if not credited:
            async with config() as cfg:
                await cfg.skus.give_back(sku.sku)
                await cfg.commit()
    return TopUpResult(credited, account)


async def credit_pack(
    uow: ShardUnitOfWork,
    *,
    user_id: str,
    activity: Activity,
    sku: int,
    pack: QuotaPack,
    welcome: QuotaPack | None,
    out_business_no: str,
    now: datetime,
) -> bool:
    """In `uow`: record the top-up and credit the pack, unless this user's
    `out_business_no` was credited before (False, nothing changed). An account it opens
    gets the welcome pack first. The caller holds the account in `crediting`."""
    added = await uow.top_ups.add(
        order_id=ids.order_id(now),
        user_id=user_id,
        activity_id=activity.id,
        sku=sku,
        out_business_no=out_business_no,
        pack=pack,
        at=now,
    )
    if added:
        await welcome_first(uow, user_id, activity, welcome, now)
        await uow.quotas.credit(user_id, activity.id, pack, activity.day(now), activity.month(now))
    return added


@dataclass(frozen=True, slots=True)
class PackCredit:
    """The arguments of one `credit_pack`."""

    user_id: str
    activity: Activity
    sku: int
    pack: QuotaPack
    welcome: QuotaPack | None
    out_business_no: str
    now: datetime

    @property
    def holder(self) -> Holder:
        return self.user_id, self.activity.id


async def credit_packs(uow: ShardUnitOfWork, credits: Sequence[PackCredit]) -> None:
    """`credit_pack` for many, in a few statements whatever their number (and a read per
    account credited that has a welcome pack): the top-ups recorded together, then the
    accounts, days and months of those recorded credited together. Only for callers that
    hold what makes each `out_business_no` theirs (see `TopUpRepository.add_many`)."""
    orders = [
        TopUpOrder(
            ids.order_id(c.now), c.user_id, c.activity.id, c.sku, c.out_business_no, c.pack, c.now
        )
        for c in credits
    ]
    added = await uow.top_ups.add_many(orders)
    fresh = [c for c, order in zip(credits, orders, strict=True) if order.order_id in added]
    for c in {c.holder: c for c in fresh}.values():
        await welcome_first(uow, c.user_id, c.activity, c.welcome, c.now)
    await uow.quotas.credit_many(
        [
            (c.user_id, c.activity.id, c.pack, c.activity.day(c.now), c.activity.month(c.now))
            for c in fresh
        ]
    )


async def welcome_first(
    uow: ShardUnitOfWork, user_id: str, activity: Activity, welcome: QuotaPack | None, now: datetime
) -> None:
    """Open the account with the welcome pack if this is the user's first touch of the
    activity, so that chances credited before their first visit do not cost them the pack.

    Read first, not merely INSERT IGNORE: on MariaDB that insert takes a shared lock on the
    row it finds, and a user's draws that all hold it deadlock as each comes to take a
    chance. A user whose chances ran out would take that lock on every draw; a 1,000-draw
    burst then saw draws dropped as deadlock victims four times running."""
    day, month = activity.day(now), activity.month(now)
    if welcome is not None and await uow.quotas.get(user_id, activity.id, day, month) is None:
        await uow.quotas.open(user_id, activity.id, welcome)


async def my_account(
    user_id: str,
    activity_id: int,
    *,
    catalogue: Catalogue,
    shards: Shards,
    clock: Clock,
    hints: ChanceHints,
) -> QuotaAccount:
    """The user's chances in an activity; a first visit opens it with the welcome pack."""
    activity = await catalogue.activity(activity_id)
    welcome = await catalogue.welcome(activity)
    now = clock.now()
    day, month = activity.periods(now)
    async with shards.for_user(user_id) as uow:  # a look: no credit, so marks stay
        if (found := await uow.quotas.get(user_id, activity.id, day, month)) is not None:
            return found
    holders = [] if welcome is None else [(user_id, activity.id)]
    async with crediting(hints, holders, clock), shards.for_user(user_id) as uow:
        opened = await uow.quotas.open(user_id, activity.id, welcome)
        account = await _account(uow, user_id, activity.id, day, month)
        if opened:
            await uow.commit()
    return account


async def _account(
    uow: ShardUnitOfWork, user_id: str, activity_id: int, day: str, month: str
) -> QuotaAccount:
    found = await uow.quotas.get(user_id, activity_id, day, month)
    return found or QuotaAccount(user_id, activity_id, 0, 0, 0, 0, 0, 0)
