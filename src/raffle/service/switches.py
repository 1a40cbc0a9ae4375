"""Operators' runtime switches: list them, set one (stored, audited, announced), the audit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from raffle.domain.profile_fields import PLAYER_FIELDS
from raffle.domain.switches import (
    LIMITS,
    MAINTENANCE,
    InvalidSwitch,
    SwitchChange,
    activity_draws,
    checked,
    default,
    profile_edit,
    rule_switch,
    switchable_rules,
    switched_activity,
    switched_rule,
)
from raffle.service.activities import stored
from raffle.service.campaigns import UnknownStrategy
from raffle.service.news import tell
from raffle.service.ports import Clock, UnitOfWork
from raffle.service.switchboard import SwitchBoard


@dataclass(frozen=True, slots=True)
class Switch:
    name: str
    value: str
    default: str


async def switches(board: SwitchBoard, uow: Callable[[], UnitOfWork]) -> list[Switch]:
    """Every switch an operator may set, with its value in this process: maintenance, the
    draws of each activity, the switchable rules of their strategies, the profile fields
    players may change, the limits."""
    async with uow() as reader:
        activities = sorted(await reader.activities.all(), key=lambda a: a.id)
        names = [MAINTENANCE, *(activity_draws(a.id) for a in activities)]
        for strategy_id in dict.fromkeys(a.strategy_id for a in activities):
            if (strategy := await reader.strategies.get(strategy_id)) is not None:
                names += [rule_switch(strategy_id, r) for r in switchable_rules(strategy)]
    names += [profile_edit(f) for f in PLAYER_FIELDS]
    names += list(LIMITS)
    return [_state(board, name) for name in names]


async def set_switch(
    name: str,
    value: str,
    *,
    actor: str,
    board: SwitchBoard,
    uow: Callable[[], UnitOfWork],
    clock: Clock,
) -> Switch:
    """Set one switch for every process: stored and audited with `actor`, in effect here
    at once and in the other processes as soon as they hear of it. Setting the value it
    has changes nothing and audits nothing."""
    fallback = default(name, board.limits)
    value = checked(name, value)
    await _check_target(name, uow)
    change = await board.store.change(name, value, fallback, actor, clock.now())
    await board.refresh()
    if change is not None:
        await tell(board.news, change.version)
    return Switch(name, value, fallback)


async def audit(board: SwitchBoard, limit: int) -> list[SwitchChange]:
    """The latest changes, newest first."""
    return await board.store.audit(limit)


def _state(board: SwitchBoard, name: str) -> Switch:
    fallback = default(name, board.limits)
    return Switch(name, board.current.values.get(name, fallback), fallback)


async def _check_target(name: str, uow: Callable[[], UnitOfWork]) -> None:
    """The activity or the strategy's rule a switch names exists."""
    activity_id, rule = switched_activity(name), switched_rule(name)
    async with uow() as reader:
        if activity_id is not None:
            await stored(activity_id, reader)
        if rule is None:
            return
        strategy = await reader.strategies.get(rule[0])
    if strategy is None:
        raise UnknownStrategy(f"strategy {rule[0]} does not exist")
    if rule[1] not in (known := switchable_rules(strategy)):
        raise InvalidSwitch(
            f"strategy {rule[0]} has no switchable rule {rule[1]!r}"
            f" (switchable: {', '.join(known) or 'none'})"
        )
