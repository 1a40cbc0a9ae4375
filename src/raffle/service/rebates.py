"""Behaviour rebates: a behaviour granted once per business key, and daily sign-in with
its calendar and streak."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from raffle.domain.activity import Activity
from raffle.domain.draws import ActivityNotOpen
from raffle.domain.quota import QuotaPack, Sku
from raffle.domain.rebates import (
    SIGN_IN,
    InvalidBehaviour,
    NoRebateRule,
    RebateOrder,
    RebateRule,
    check_behaviour,
    streak,
)
from raffle.domain.users import InvalidInput
from raffle.service import ids
from raffle.service.catalogue import Catalogue
from raffle.service.contention import retried
from raffle.service.points import earn
from raffle.service.ports import ChanceHints, Clock, Shards, SignInCalendar, UnitOfWork
from raffle.service.quotas import credit_pack
from raffle.service.refusals import crediting
from raffle.service.sku_units import held_unit

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Behaviour:
    user_id: str
    activity_id: int
    behaviour: str
    business_key: str  # what makes two reports the same, e.g. the day or a payment id


@dataclass(frozen=True, slots=True)
class RebateResult:
    granted: bool  # False: rebated before under this business key; nothing changed now
    order: RebateOrder


async def rebate(
    cmd: Behaviour,
    *,
    catalogue: Catalogue,
    config: Callable[[], UnitOfWork],
    shards: Shards,
    clock: Clock,
    hints: ChanceHints,
) -> RebateResult:
    """Grant what the activity's rule for the behaviour grants, once per business key.

    The rebate order, its top-up and its points are one transaction on the user's shard;
    the rebate order's unique key makes a concurrent twin wait for the first and then do
    nothing. A sold-out SKU refuses the whole rebate (nothing granted, nothing recorded).
    """
    if cmd.behaviour == SIGN_IN:
        # Its business key is a day the calendar reads back: only `sign_in` itself writes it.
        raise InvalidBehaviour(f"{SIGN_IN!r} is reported by the player signing in")
    return await _rebate(cmd, clock.now(), _Doors(catalogue, config, shards, clock, hints))


@dataclass(frozen=True, slots=True)
class _Doors:
    """What a rebate goes through."""

    catalogue: Catalogue
    config: Callable[[], UnitOfWork]
    shards: Shards
    clock: Clock
    hints: ChanceHints


async def _rebate(cmd: Behaviour, now: datetime, doors: _Doors) -> RebateResult:
    check_behaviour(cmd.behaviour, cmd.business_key)
    catalogue = doors.catalogue
    activity = await catalogue.activity(cmd.activity_id)
    if not activity.is_open(now):
        raise ActivityNotOpen(f"activity {activity.id} is {activity.state}, not open")
    rule = (await catalogue.rebate_rules(activity.id)).get(cmd.behaviour)
    if rule is None or not rule.enabled:
        raise NoRebateRule(f"activity {activity.id} has no rebate for {cmd.behaviour!r}")
    sku = await catalogue.sku(rule.sku) if rule.sku is not None else None
    grant = _Grant(
        cmd, rule, activity, now,
        (sku, await catalogue.pack(sku.pack_id)) if sku is not None else None,
        await catalogue.welcome(activity),
    )  # fmt: skip
    return await retried(lambda: _grant(grant, doors))


@dataclass(frozen=True, slots=True)
class _Grant:
    cmd: Behaviour
    rule: RebateRule
    activity: Activity
    now: datetime
    chances: tuple[Sku, QuotaPack] | None  # the rule's SKU and the pack it sells
    welcome: QuotaPack | None


async def _grant(g: _Grant, doors: _Doors) -> RebateResult:
    cmd, shards = g.cmd, doors.shards
    key = (cmd.user_id, cmd.activity_id, cmd.behaviour, cmd.business_key)
    async with shards.for_user(cmd.user_id) as uow:  # most repeats end here, cheaply
        if (found := await uow.rebates.get(*key)) is not None:
            return RebateResult(False, found)
    order = _order(cmd, g.rule, g.now)
    holders = [] if g.chances is None else [(cmd.user_id, g.activity.id)]
    async with (
        held_unit(doors.config, g.rule.sku) as hold,
        crediting(doors.hints, holders, doors.clock),
        shards.for_user(cmd.user_id) as uow,
    ):
        if not await uow.rebates.add(order):
            found = await uow.rebates.get(*key)
            assert found is not None, "the twin that won has committed its order"
            return RebateResult(False, found)
        if g.chances is not None:
            sku, pack = g.chances
            await credit_pack(
                uow,
                user_id=cmd.user_id,
                activity=g.activity,
                sku=sku.sku,
                pack=pack,
                welcome=g.welcome,
                out_business_no=order.business_no,
                now=g.now,
            )
        if g.rule.points is not None:
            await earn(
                uow, user_id=cmd.user_id, amount=g.rule.points, out_business_no=order.business_no,
                reason=f"rebate {cmd.behaviour}"[:64], now=g.now,
            )  # fmt: skip
        await uow.commit()
        hold.keep()
    return RebateResult(True, order)


def _order(cmd: Behaviour, rule: RebateRule, now: datetime) -> RebateOrder:
    return RebateOrder(
        order_id=ids.order_id(now),
        user_id=cmd.user_id,
        activity_id=cmd.activity_id,
        behaviour=cmd.behaviour,
        business_key=cmd.business_key,
        sku=rule.sku,
        points=rule.points,
        created_at=now,
    )


# --- daily sign-in ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SignIn:
    granted: bool  # False: already signed in today; nothing granted again
    day: date  # today, in the activity's time zone
    order: RebateOrder
    streak: int


async def sign_in(
    user_id: str,
    activity_id: int,
    *,
    catalogue: Catalogue,
    config: Callable[[], UnitOfWork],
    shards: Shards,
    clock: Clock,
    calendar: SignInCalendar,
    hints: ChanceHints,
) -> SignIn:
    """Sign in today (the activity's calendar day): the `sign_in` rebate, once a day."""
    now = clock.now()  # once: the business key and the rebate's time agree at midnight
    activity = await catalogue.activity(activity_id)
    today = _local_day(activity, now)
    cmd = Behaviour(user_id, activity_id, SIGN_IN, today.isoformat())
    done = await _rebate(cmd, now, _Doors(catalogue, config, shards, clock, hints))
    # Also on a repeat: it heals a mark that an earlier call failed to write.
    await calendar.mark(user_id, activity_id, today)
    count = await _streak(_Months(calendar, user_id, activity), today)
    return SignIn(done.granted, today, done.order, count)


@dataclass(frozen=True, slots=True)
class SignIns:
    month: date  # its first day
    days: list[int]  # days of the month signed, ascending
    today: date
    signed_today: bool
    streak: int


async def sign_ins(
    user_id: str,
    activity_id: int,
    month: str | None,
    *,
    catalogue: Catalogue,
    clock: Clock,
    calendar: SignInCalendar,
) -> SignIns:
    """My sign-in calendar for `month` (YYYY-MM; None: this month) and my current streak."""
    activity = await catalogue.activity(activity_id)
    today = _local_day(activity, clock.now())
    first = _month(month) if month is not None else today.replace(day=1)
    months = _Months(calendar, user_id, activity)
    days = await months.days(first)
    signed_today = today.day in await months.days(today.replace(day=1))
    return SignIns(first, sorted(days), today, signed_today, await _streak(months, today))


async def signed_days(
    shards: Shards, user_id: str, activity_id: int, month: date
) -> frozenset[int]:
    """The days of `month` the user signed in, from the rebate orders (the truth)."""
    prefix = month.strftime("%Y-%m")
    async with shards.for_user(user_id) as uow:
        keys = await uow.rebates.keys(user_id, activity_id, SIGN_IN, f"{prefix}-01", f"{prefix}-31")
    return frozenset(int(k[8:]) for k in keys if len(k) == 10 and k[8:].isdigit())


class _Months:
    """One user's sign-in days by month in one activity, each month asked for once."""

    def __init__(self, calendar: SignInCalendar, user_id: str, activity: Activity) -> None:
        self._calendar = calendar
        self._user_id = user_id
        self.activity = activity
        self._read: dict[date, frozenset[int]] = {}

    async def days(self, month: date) -> frozenset[int]:
        if not _within(self.activity, month):
            return frozenset()  # never asked: a month outside the window makes no Redis key
        if month not in self._read:
            self._read[month] = await self._calendar.month(self._user_id, self.activity.id, month)
        return self._read[month]


async def _streak(months: _Months, today: date) -> int:
    """The streak ending today (or yesterday), reading earlier months only while it might
    run into them, and never before the activity began."""
    signed: set[date] = set()
    month = today.replace(day=1)
    while _within(months.activity, month):
        signed |= {month.replace(day=d) for d in await months.days(month)}
        count = streak(frozenset(signed), today)
        reached = today - timedelta(days=count if today in signed else count + 1)
        if reached >= month:  # the streak stops inside the months read
            return count
        month = (month - timedelta(days=1)).replace(day=1)
    return streak(frozenset(signed), today)


def _within(activity: Activity, month: date) -> bool:
    """Whether the month overlaps the activity's window: no sign-in can fall outside it."""
    zone = ZoneInfo(activity.time_zone)
    begin = activity.begin_at.astimezone(zone).date().replace(day=1)
    return begin <= month <= activity.end_at.astimezone(zone).date()


def _local_day(activity: Activity, now: datetime) -> date:
    return now.astimezone(ZoneInfo(activity.time_zone)).date()


def _month(text: str) -> date:
    try:
        year, month = text.split("-")
        if len(year) != 4 or len(month) != 2:
            raise ValueError(text)
        return date(int(year), int(month), 1)
    except ValueError:
        raise InvalidInput(f"month must read YYYY-MM, got {text!r}") from None
