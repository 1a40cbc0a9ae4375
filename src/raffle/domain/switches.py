"""Runtime switches (seed 001/003 降级开关, 动态配置): what operators change on a live service."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from raffle.domain.errors import RaffleError, Unavailable
from raffle.domain.profile_fields import PLAYER_FIELDS
from raffle.domain.strategy import Strategy

# A switch has a name and a text value; one not set has its default. The names:
# - `maintenance`: `on` refuses every write (read-only service), default `off`;
# - `activity.<id>.draws`: `off` pauses the activity's draws, default `on`;
# - `strategy.<id>.rule.weight`, `strategy.<id>.rule.lock.<award id>`: `off` takes the rule out
#   of the strategy, default `on`. Only rules the published odds show can be switched (weight
#   tiers, a prize's lock), so a switched-off rule is never a hidden change: the published
#   odds show the strategy without it. Listed users and guarantees are promises made to the
#   players with the odds: they do not switch;
# - `profile.edit.<field>`: `on` lets players change that field of their own profile
#   (domain/profile_fields.py PLAYER_FIELDS), default `off`;
# - `draws_per_second`, `registrations_per_hour`, `draw_batch_size`: a whole number, default
#   the setting of the same name.
ON, OFF = "on", "off"
MAINTENANCE = "maintenance"
LIMITS: dict[str, int] = {  # each limit and its largest value
    "draws_per_second": 1_000_000,
    "registrations_per_hour": 1_000_000,
    "draw_batch_size": 1_000,
}
SWITCHABLE_RULES = ("weight", "lock")  # the rules whose absence the published odds show
PAUSED_RETRY_SECONDS = 30  # what a refused draw's Retry-After says: an operator acts in minutes

_ACTIVITY = re.compile(r"activity\.(\d{1,18})\.draws")
_RULE = re.compile(r"strategy\.(\d{1,18})\.rule\.(weight|lock\.\d{1,18})")
_PROFILE_FIELD = re.compile(rf"profile\.edit\.({'|'.join(PLAYER_FIELDS)})")


class InvalidSwitch(RaffleError):
    code = "invalid_switch"


class DrawsPaused(Unavailable):
    """An operator switched the activity's draws off."""

    code = "draws_paused"
    retry_after = PAUSED_RETRY_SECONDS


class InMaintenance(Unavailable):
    """An operator switched the service to read-only maintenance."""

    code = "maintenance"
    retry_after = PAUSED_RETRY_SECONDS


@dataclass(frozen=True, slots=True)
class SwitchChange:
    """One audited change: who set which switch from what to what, and when."""

    version: int
    name: str
    old: str  # the value before, its default if it was not set
    new: str
    actor: str
    at: datetime


def activity_draws(activity_id: int) -> str:
    return f"activity.{activity_id}.draws"


def rule_switch(strategy_id: int, rule: str) -> str:
    """`rule`: `weight`, or `lock.<award id>`."""
    return f"strategy.{strategy_id}.rule.{rule}"


def profile_edit(field: str) -> str:
    return f"profile.edit.{field}"


def default(name: str, limits: Mapping[str, int]) -> str:
    """The value of switch `name` while no operator set it; `limits`: the settings'."""
    if name in LIMITS:
        return str(limits[name])
    if name == MAINTENANCE or _PROFILE_FIELD.fullmatch(name):
        return OFF
    if _ACTIVITY.fullmatch(name) or _RULE.fullmatch(name):
        return ON
    raise InvalidSwitch(
        f"unknown switch {name!r}: use maintenance, activity.<id>.draws, "
        f"strategy.<id>.rule.weight, strategy.<id>.rule.lock.<award>, "
        f"profile.edit.<{'|'.join(PLAYER_FIELDS)}>, or {', '.join(LIMITS)}"
    )


def checked(name: str, value: str) -> str:
    """`value` for switch `name`, normalised; InvalidSwitch if it cannot be."""
    value = value.strip().lower()
    if name not in LIMITS:
        if value not in (ON, OFF):
            raise InvalidSwitch(f"switch {name!r} is 'on' or 'off', got {value!r}")
        return value
    if not value.isdigit() or not 1 <= int(value) <= LIMITS[name]:
        raise InvalidSwitch(f"{name} is a whole number from 1 to {LIMITS[name]}, got {value!r}")
    return str(int(value))


def switched_rule(name: str) -> tuple[int, str] | None:
    """(strategy id, rule) of a rule switch's name; None for other switches."""
    found = _RULE.fullmatch(name)
    return (int(found[1]), found[2]) if found else None


def switched_activity(name: str) -> int | None:
    found = _ACTIVITY.fullmatch(name)
    return int(found[1]) if found else None


@dataclass(frozen=True, slots=True)
class Switches:
    """The switches at one version, read on every request: plain lookups only."""

    version: int = 0
    values: Mapping[str, str] = field(default_factory=dict)  # those set, by name
    limits: Mapping[str, int] = field(default_factory=dict)  # every limit, defaults applied
    maintenance: bool = False
    paused: frozenset[int] = frozenset()  # activities whose draws are off
    rules_off: Mapping[int, frozenset[str]] = field(default_factory=dict)  # by strategy
    player_fields: frozenset[str] = frozenset()  # profile fields players may change

    @classmethod
    def of(cls, version: int, values: Mapping[str, str], limits: Mapping[str, int]) -> Switches:
        """`limits`: the settings' values, for the limits no operator set."""
        off: dict[int, set[str]] = {}
        for name, value in values.items():
            if value == OFF and (rule := switched_rule(name)) is not None:
                off.setdefault(rule[0], set()).add(rule[1])
        return cls(
            version=version,
            values=dict(values),
            limits={n: int(values.get(n, limits[n])) for n in LIMITS},
            maintenance=values.get(MAINTENANCE) == ON,
            paused=frozenset(
                a for n, v in values.items() if v == OFF and (a := switched_activity(n)) is not None
            ),
            rules_off={s: frozenset(rules) for s, rules in off.items()},
            player_fields=frozenset(f for f in PLAYER_FIELDS if values.get(profile_edit(f)) == ON),
        )


def without_rules(strategy: Strategy, off: frozenset[str]) -> Strategy:
    """The strategy with the switched-off rules taken out: what draws run and the odds show."""
    if not off:
        return strategy
    prizes = tuple(
        replace(p, rules=tuple((n, v) for n, v in p.rules if f"{n}.{p.award_id}" not in off))
        for p in strategy.prizes
    )
    rules = tuple((n, v) for n, v in strategy.rules if n not in off)
    return replace(strategy, prizes=prizes, rules=rules)


def switchable_rules(strategy: Strategy) -> list[str]:
    """The rules of the strategy an operator may switch off, as rule_switch names them."""
    found = [n for n, _ in strategy.rules if n in SWITCHABLE_RULES]
    found += [f"{n}.{p.award_id}" for p in strategy.prizes for n, _ in p.rules if n == "lock"]
    return list(dict.fromkeys(found))
