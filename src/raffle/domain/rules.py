"""Draw rules as plain functions in registries: adding a rule is adding a function.

A pre-draw rule looks at who draws and how often, and may narrow the pick to a pool of
prizes (listed users to one prize, a weight tier or a guarantee to its prizes). A post-draw
rule looks at the picked prize and may refuse it, which hands out the fallback instead. Rules
never touch randomness or stock, so the engine can also compute the exact odds they produce;
every one of them is published with the odds (domain/disclosure.py, weight tiers, locks).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from raffle.domain.awards import Award, AwardKind
from raffle.domain.errors import InvalidConfig
from raffle.domain.prize_cards import MAX_LEVEL
from raffle.domain.strategy import Strategy, StrategyPrize


@dataclass(frozen=True, slots=True)
class DrawContext:
    user_id: str
    draw_count: int  # the user's draws in the activity, *including* the current one


@dataclass(frozen=True, slots=True)
class Selection:
    rule: str
    pool: frozenset[int] | None  # None: the whole odds table
    # A guarantee: drawn only among its prizes with stock left, at their relative rates
    # whatever the exhaustion mode; with none left the rule steps aside (an ordinary draw).
    kept: bool = False


DEFAULT = Selection("default", None)
LISTED = "listed"  # forced prizes for listed users (big-market's rule_blacklist)
GUARANTEE = "guarantee"  # seed 004's 后门, only as a disclosed guarantee
ANY_PRIZE = "win"  # a guarantee's pool of every prize that can win
BY_LEVEL = "level<="  # a guarantee's pool of the prizes that can win of that level or better

PreDrawRule = Callable[[DrawContext], Selection | None]
PostDrawRule = Callable[[DrawContext], bool]  # False: the prize is refused, the fallback given


def listed(value: str, strategy: Strategy, awards: Mapping[int, Award]) -> PreDrawRule:
    """`"100:user001,user002"`: listed users only ever get award 100 (the fallback once it
    has no stock left). Published as the group's size and the award, never its members."""
    award_id, users = parse_listed(value)
    if award_id not in awards:
        raise InvalidConfig(f"listed award {award_id} is not a known award")
    selection = Selection(LISTED, frozenset({award_id}))

    def rule(ctx: DrawContext) -> Selection | None:
        return selection if ctx.user_id in users else None

    return rule


def parse_listed(value: str) -> tuple[int, frozenset[str]]:
    """`"100:user001,user002"` -> (100, {"user001", "user002"})."""
    award_text, sep, users_text = value.partition(":")
    award_id = _award_id(award_text, value)
    users = frozenset(u.strip() for u in users_text.split(",") if u.strip())
    if not sep or not users:
        raise InvalidConfig(f"listed must read 'award:user,user', got {value!r}")
    return award_id, users


def guarantee(value: str, strategy: Strategy, awards: Mapping[int, Award]) -> PreDrawRule:
    """`"1:win 10:102,103 20:level<=3"`: a user's 1st draw in the activity wins a real prize
    (neither the fallback nor a thanks award), their 10th one of 102 and 103, their 20th a
    prize of level 3 or better; each drawn at the prizes' relative rates among those with
    stock left. With none left the draw is an ordinary one."""
    selections = {
        draw: Selection(GUARANTEE, pool, kept=True)
        for draw, pool in parse_guarantees(value, strategy, awards).items()
    }

    def rule(ctx: DrawContext) -> Selection | None:
        return selections.get(ctx.draw_count)

    return rule


def parse_guarantees(
    value: str, strategy: Strategy, awards: Mapping[int, Award]
) -> dict[int, frozenset[int]]:
    """`"1:win 10:102,103"` -> {1: every prize that can win at draw 1, 10: {102, 103}}."""
    return {
        draw: _guaranteed(draw, text, strategy, awards)
        for draw, text in guarantee_clauses(value).items()
    }


def guarantee_clauses(value: str) -> dict[int, str]:
    """`"1:win 10:level<=3"` -> {1: "win", 10: "level<=3"}: each draw's pool as written."""
    clauses: dict[int, str] = {}
    for part in value.split():
        draw_text, sep, pool_text = part.partition(":")
        if not sep or not draw_text.isdigit() or int(draw_text) < 1:
            raise InvalidConfig(
                f"guarantee must read 'draw:award,award', 'draw:{ANY_PRIZE}' or "
                f"'draw:{BY_LEVEL}level', got {part!r}"
            )
        if int(draw_text) in clauses:
            raise InvalidConfig(f"guarantee for draw {draw_text} is given twice")
        clauses[int(draw_text)] = pool_text
    if not clauses:
        raise InvalidConfig("guarantee rule has no draws")
    return clauses


def guaranteed_level(draw: int, text: str) -> int | None:
    """The level a guarantee's pool `level<=N` names (N); None for a pool of awards or `win`."""
    if not text.startswith(BY_LEVEL):
        return None
    level = text.removeprefix(BY_LEVEL)
    if not (level.isascii() and level.isdigit()) or not 1 <= int(level) <= MAX_LEVEL:
        raise InvalidConfig(
            f"guarantee {draw}: {text!r} must name a level from 1 to {MAX_LEVEL}, "
            f"e.g. '{BY_LEVEL}3'"
        )
    return int(level)


def level_pools(strategy: Strategy) -> dict[int, frozenset[int]]:
    """The prizes of each guarantee by level whose cards have that level or better, by draw.

    Cards are not the strategy's terms (they may change while an activity runs), but the
    pool a guarantee by level makes of them is: a running activity's freeze compares these
    too, so a level change that would move a prize into or out of a promise is refused."""
    pools: dict[int, frozenset[int]] = {}
    for name, value in strategy.rules:
        if name != GUARANTEE:
            continue
        for draw, text in guarantee_clauses(value).items():
            if (level := guaranteed_level(draw, text)) is not None:
                pools[draw] = _of_level(strategy, level)
    return pools


def frozen_terms(strategy: Strategy) -> tuple[Strategy, dict[int, frozenset[int]]]:
    """What publishing a strategy promises, and so what may not change while an activity
    that runs or ran publishes it: its terms and the prizes its guarantees by level name."""
    return strategy.terms(), level_pools(strategy)


def _of_level(strategy: Strategy, level: int) -> frozenset[int]:
    return frozenset(
        p.award_id for p in strategy.prizes if p.card.level is not None and p.card.level <= level
    )


def _guaranteed(
    draw: int, text: str, strategy: Strategy, awards: Mapping[int, Award]
) -> frozenset[int]:
    """The prizes a guarantee for `draw` names: `win` for every prize that can win there,
    `level<=N` for those of level N or better that can, or award ids, each of which must."""
    why_not = {p.award_id: _cannot_win(p, draw, strategy, awards) for p in strategy.prizes}
    if text == ANY_PRIZE:
        pool = frozenset(a for a, reason in why_not.items() if reason is None)
        if not pool:
            raise InvalidConfig(f"guarantee {draw}: no prize of the strategy can win there")
        return pool
    if (level := guaranteed_level(draw, text)) is not None:
        return _by_level(draw, level, strategy, why_not)
    pool = frozenset(_award_id(a, f"{draw}:{text}") for a in text.split(","))
    for award_id in sorted(pool):
        if award_id not in why_not:
            raise InvalidConfig(f"guarantee {draw}: award {award_id} is not a prize")
        if (reason := why_not[award_id]) is not None:
            raise InvalidConfig(f"guarantee {draw}: award {award_id} {reason}")
    return pool


def _by_level(
    draw: int, level: int, strategy: Strategy, why_not: Mapping[int, str | None]
) -> frozenset[int]:
    """The prizes of level `level` or better that can win at `draw`; refused with each one's
    reason when there are none."""
    named = _of_level(strategy, level)
    if not named:
        raise InvalidConfig(f"guarantee {draw}: no prize has level {level} or better")
    pool = frozenset(a for a in named if why_not[a] is None)
    if not pool:
        reasons = "; ".join(f"award {a} {why_not[a]}" for a in sorted(named))
        raise InvalidConfig(
            f"guarantee {draw}: no prize of level {level} or better can win there ({reasons})"
        )
    return pool


def _cannot_win(
    prize: StrategyPrize, draw: int, strategy: Strategy, awards: Mapping[int, Award]
) -> str | None:
    """Why a guarantee for `draw` could not hand out this prize as a win; None: it can."""
    locks = [parse_lock(v) for name, v in prize.rules if name == "lock"]
    if prize.award_id == strategy.fallback.award_id:
        return "is the fallback, not a win"
    if (award := awards.get(prize.award_id)) is not None and award.kind is AwardKind.THANKS:
        return "is a thanks award, not a win"
    if prize.weight == 0:
        return "has rate 0, so it is never drawn"
    if locks and max(locks) > draw:
        return f"is locked until draw {max(locks)}"
    return None


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
    LISTED: listed,
    "weight": weight,
    GUARANTEE: guarantee,
}
POST_DRAW: dict[str, Callable[[str], PostDrawRule]] = {"lock": lock}


def _award_id(text: str, context: str) -> int:
    if not text.strip().isdigit():
        raise InvalidConfig(f"{text!r} is not an award id (in {context!r})")
    return int(text)
