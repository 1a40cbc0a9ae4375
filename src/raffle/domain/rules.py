"""Draw rules as plain functions in registries: adding a rule is adding a function.

A pre-draw rule looks at who draws and how often, and may narrow the pick to a pool of
prizes (a blacklist to one prize, a weight tier to its prizes). A post-draw rule looks at
the picked prize and may refuse it, which hands out the fallback instead. Rules never touch
randomness or stock, so the engine can also compute the exact odds they produce.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from raffle.domain.awards import Award
from raffle.domain.errors import InvalidConfig
from raffle.domain.strategy import Strategy


@dataclass(frozen=True, slots=True)
class DrawContext:
    user_id: str
    draw_count: int  # the user's draws in the activity, *including* the current one


@dataclass(frozen=True, slots=True)
class Selection:
    rule: str
    pool: frozenset[int] | None  # None: the whole odds table


DEFAULT = Selection("default", None)

PreDrawRule = Callable[[DrawContext], Selection | None]
PostDrawRule = Callable[[DrawContext], bool]  # False: the prize is refused, the fallback given


def blacklist(value: str, strategy: Strategy, awards: Mapping[int, Award]) -> PreDrawRule:
    """`"100:user001,user002"`: listed users always get award 100 (if it has stock)."""
    award_text, sep, users_text = value.partition(":")
    award_id = _award_id(award_text, value)
    users = frozenset(u.strip() for u in users_text.split(",") if u.strip())
    if not sep or not users:
        raise InvalidConfig(f"blacklist must read 'award:user,user', got {value!r}")
    if award_id not in awards:
        raise InvalidConfig(f"blacklist award {award_id} is not a known award")
    selection = Selection("blacklist", frozenset({award_id}))

    def rule(ctx: DrawContext) -> Selection | None:
        return selection if ctx.user_id in users else None

    return rule


def weight(value: str, strategy: Strategy, awards: Mapping[int, Award]) -> PreDrawRule:
    """`"60:102,103 200:106"`: from 60 draws on, draw only among 102 and 103 at their relative
    rates; from 200 on, only 106. The highest tier reached applies."""
    tiers = parse_weight_tiers(value)
    for threshold, pool in tiers.items():
        for award_id in sorted(pool):
            if strategy.prize(award_id) is None:
                raise InvalidConfig(f"weight tier {threshold}: award {award_id} is not a prize")
        if sum(p.weight for p in strategy.prizes if p.award_id in pool) == 0:
            raise InvalidConfig(f"weight tier {threshold}: its prizes all have rate 0")
    thresholds = sorted(tiers)
    selections = [Selection("weight", tiers[t]) for t in thresholds]

    def rule(ctx: DrawContext) -> Selection | None:
        reached = bisect_right(thresholds, ctx.draw_count)
        return selections[reached - 1] if reached else None

    return rule


def parse_weight_tiers(value: str) -> dict[int, frozenset[int]]:
    """`"60:102,103 200:106"` -> {60: {102, 103}, 200: {106}}."""
    tiers: dict[int, frozenset[int]] = {}
    for part in value.split():
        threshold_text, sep, prizes_text = part.partition(":")
        if not sep or not threshold_text.isdigit() or int(threshold_text) < 1:
            raise InvalidConfig(f"weight tier must read 'draws:award,award', got {part!r}")
        if int(threshold_text) in tiers:
            raise InvalidConfig(f"weight tier threshold {threshold_text} is given twice")
        tiers[int(threshold_text)] = frozenset(_award_id(p, part) for p in prizes_text.split(","))
    if not tiers:
        raise InvalidConfig("weight rule has no tiers")
    return tiers


def lock(value: str) -> PostDrawRule:
    """`"3"`: the prize can only be won from the user's third draw on (this draw counted)."""
    needed = parse_lock(value)

    def rule(ctx: DrawContext) -> bool:
        return ctx.draw_count >= needed

    return rule


def parse_lock(value: str) -> int:
    if not value.strip().isdigit() or int(value) < 1:
        raise InvalidConfig(f"lock must be a whole number of draws of at least 1, got {value!r}")
    return int(value)


PRE_DRAW: dict[str, Callable[[str, Strategy, Mapping[int, Award]], PreDrawRule]] = {
    "blacklist": blacklist,
    "weight": weight,
}
POST_DRAW: dict[str, Callable[[str], PostDrawRule]] = {"lock": lock}


def _award_id(text: str, context: str) -> int:
    if not text.strip().isdigit():
        raise InvalidConfig(f"{text!r} is not an award id (in {context!r})")
    return int(text)
