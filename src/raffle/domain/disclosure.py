"""The rules that change a draw's outcome as the published odds state them: nothing hidden."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from raffle.domain.awards import Award
from raffle.domain.rules import (
    GUARANTEE,
    LISTED,
    guarantee_clauses,
    guaranteed_level,
    parse_guarantees,
    parse_listed,
)
from raffle.domain.strategy import Strategy


@dataclass(frozen=True, slots=True)
class ListedGroup:
    """Listed users get only `award_id`: published as how many they are, never who."""

    award_id: int
    users: int
    in_force: bool  # the award has stock left; without, they get the fallback

    @property
    def award_ids(self) -> frozenset[int]:
        return frozenset({self.award_id})


@dataclass(frozen=True, slots=True)
class Guarantee:
    """A user's `draw`th draw in the activity wins one of `award_ids`."""

    draw: int
    award_ids: frozenset[int]
    # Each prize's exact chance on that draw: the rates renormalised over the guaranteed
    # prizes with stock left. Empty: none has any, and that draw is an ordinary one.
    chances: Mapping[int, Fraction]
    level: int | None = None  # the promise as written: a prize of this level or better

    @property
    def in_force(self) -> bool:
        return bool(self.chances)


DisclosedRule = ListedGroup | Guarantee


def disclosed_rules(
    strategy: Strategy, awards: Mapping[int, Award], exhausted: frozenset[int]
) -> tuple[DisclosedRule, ...]:
    """The strategy's listed-users rule and guarantees in the order they run (the first that
    applies decides), with the prizes in `exhausted` known to have no stock left."""
    found: list[DisclosedRule] = []
    for name, value in strategy.rules:
        if name == LISTED:
            award_id, users = parse_listed(value)
            found.append(ListedGroup(award_id, len(users), award_id not in exhausted))
        elif name == GUARANTEE:
            levels = {d: guaranteed_level(d, text) for d, text in guarantee_clauses(value).items()}
            for draw, pool in sorted(parse_guarantees(value, strategy, awards).items()):
                chances = guaranteed_chances(strategy, pool - exhausted)
                found.append(Guarantee(draw, pool, chances, levels[draw]))
    return tuple(found)


def guaranteed_chances(strategy: Strategy, live: frozenset[int]) -> dict[int, Fraction]:
    """How a guaranteed draw picks among the prizes `live` (those with stock): by rate, a
    disabled one never (the engine's tables leave it out)."""
    weights = {p.award_id: p.weight for p in strategy.prizes if p.award_id in live and p.enabled}
    total = sum(weights.values())
    return {a: Fraction(w, total) for a, w in weights.items()} if total else {}
