"""The draw engine: a strategy compiled into alias tables and rules, run for one draw at a time."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Protocol

from raffle.domain.awards import Award, AwardKind
from raffle.domain.errors import InvalidConfig
from raffle.domain.randomness import RandomSource
from raffle.domain.rules import (
    DEFAULT,
    GUARANTEE,
    LISTED,
    POST_DRAW,
    PRE_DRAW,
    DrawContext,
    PostDrawRule,
    PreDrawRule,
    Selection,
    parse_guarantees,
    parse_listed,
)
from raffle.domain.sampler import AliasTable
from raffle.domain.strategy import Exhaustion, Strategy, StrategyPrize

DISABLED = "disabled"  # the rule recorded when a rule chose a prize the operator disabled

# How a draw ended, by what it handed out (DrawEngine.outcome).
WIN = "win"  # one of the strategy's prizes
FALLBACK = "fallback"  # the strategy's fallback, a consolation prize
LOSE = "lose"  # an award of kind thanks: nothing to deliver ("thanks for playing")


@dataclass(frozen=True, slots=True)
class Outcome:
    award_id: int
    rule: str  # what decided it: default, listed, weight, guarantee; or lock / stock (fallback)
    points: int | None = None  # drawn now for random-points awards, so delivery is replayable


class StockCounter(Protocol):
    def take(self, strategy_id: int, award_id: int) -> bool:
        """Take one unit of the prize's stock atomically; False when none is left."""
        ...


class DrawEngine:
    """Runs a strategy: pre-draw rules, the exact pick, post-draw rules, then stock.

    It keeps which stocked prizes it has seen run out: in `redistribute` mode they leave
    the tables, in `fallback` mode landing on them yields the fallback. A guarantee draws
    among its prizes with stock left in either mode; when none has any, it steps aside.

    `perfect` (every draw wins, seed 004 `perfect_activity`): only real prizes (neither the
    fallback nor "thanks") are drawn, at their rates renormalised over those with stock
    left; exhausted ones leave the tables whatever the mode. The exact odds say so.
    """

    def __init__(
        self,
        strategy: Strategy,
        awards: Mapping[int, Award],
        exhausted: Iterable[int] = (),
        *,
        perfect: bool = False,
    ) -> None:
        self.strategy = strategy
        self.awards = awards
        self._fallback_id = strategy.fallback.award_id
        _check_awards(strategy, awards)
        self._pre = _compile_pre(strategy, awards)
        self._post = _compile_post(strategy)
        self._stocked = frozenset(p.award_id for p in strategy.prizes if p.stock is not None)
        self._prizes = {p.award_id: p for p in strategy.prizes}
        self._disabled = frozenset(p.award_id for p in strategy.prizes if not p.enabled)
        self._exhausted = set(exhausted) | {p.award_id for p in strategy.prizes if p.stock == 0}
        self._points = {a.id: a.points_range for a in awards.values() if a.points_range}
        if strategy.fallback.points is not None:
            self._points[self._fallback_id] = strategy.fallback.points
        self._tables: dict[frozenset[int] | None, AliasTable | None] = {}
        self._thanks = frozenset(a.id for a in awards.values() if a.kind is AwardKind.THANKS)
        self.perfect = perfect
        self._listed = frozenset(
            user for name, value in strategy.rules if name == LISTED
            for user in parse_listed(value)[1]
        )  # fmt: skip
        self._renormalise = perfect or strategy.exhaustion is Exhaustion.REDISTRIBUTE

    @property
    def exhausted(self) -> frozenset[int]:
        return frozenset(self._exhausted)

    def draw(self, ctx: DrawContext, rng: RandomSource, stock: StockCounter) -> Outcome:
        """One whole draw; stock is taken only for the prize finally handed out."""
        outcome = self.choose(ctx, rng)
        while self.needs_stock(outcome) and not stock.take(self.strategy.id, outcome.award_id):
            outcome = self.on_exhausted(outcome, ctx, rng)
        return outcome

    def lists(self, user_id: str) -> bool:
        """Whether the strategy's listed-users rule names the user."""
        return user_id in self._listed

    def outcome(self, award_id: int) -> str:
        """How a draw that handed out `award_id` ended: LOSE, FALLBACK or WIN. The fallback
        counts as one whichever way it came (the odds' remainder, a rule, an empty prize),
        and so does a prize that is also the fallback's award."""
        if award_id in self._thanks:
            return LOSE
        return FALLBACK if award_id == self._fallback_id else WIN

    def prize(self, award_id: int) -> StrategyPrize | None:
        """The strategy's prize of `award_id`, looked up in constant time."""
        return self._prizes.get(award_id)

    def needs_stock(self, outcome: Outcome) -> bool:
        """Whether handing out `outcome` takes a unit of stock first."""
        return outcome.award_id in self._stocked

    def choose(self, ctx: DrawContext, rng: RandomSource) -> Outcome:
        """The prize this draw hands out if its stock can be taken: no I/O here."""
        selection = self.select(ctx)
        award_id = self._pick(selection.pool, rng)
        if award_id is None:
            return self.fallback(rng, "stock")
        if award_id != self._fallback_id:
            if award_id in self._disabled:  # a pre-draw rule's pool of one names it
                return self.fallback(rng, DISABLED)
            for name, allows in self._post.get(award_id, ()):
                if not allows(ctx):
                    return self.fallback(rng, name)
            if award_id in self._exhausted:
                return self.fallback(rng, "stock")
        return Outcome(award_id, selection.rule, self._draw_points(award_id, rng))

    def on_exhausted(self, outcome: Outcome, ctx: DrawContext, rng: RandomSource) -> Outcome:
        """What the draw yields instead when `outcome`'s prize turned out to have no stock
        left: a guaranteed draw draws again among the guarantee's prizes left (or, with none
        left, is an ordinary draw); other draws as the exhaustion mode says."""
        self.mark_exhausted(outcome.award_id)
        if self._renormalise or outcome.rule == GUARANTEE:
            return self.choose(ctx, rng)
        return self.fallback(rng, "stock")

    def mark_exhausted(self, award_id: int) -> None:
        if award_id in self._stocked and award_id not in self._exhausted:
            self._exhausted.add(award_id)
            if self._renormalise:
                self._tables.clear()

    def odds(self, ctx: DrawContext) -> dict[int, Fraction]:
        """The exact probability of each award for this context, rules and exhaustion applied."""
        pool = self.select(ctx).pool
        if pool is not None and len(pool) == 1:
            picked = {next(iter(pool)): Fraction(1)}
        else:
            table = self._table(pool)
            picked = table.masses() if table else {self._fallback_id: Fraction(1)}
        odds: dict[int, Fraction] = {}
        for award_id, mass in picked.items():
            refused = award_id != self._fallback_id and (
                award_id in self._exhausted
                or award_id in self._disabled
                or not all(allows(ctx) for _, allows in self._post.get(award_id, ()))
            )
            winner = self._fallback_id if refused else award_id
            odds[winner] = odds.get(winner, Fraction(0)) + mass
        return odds

    def select(self, ctx: DrawContext) -> Selection:
        """The pool the first pre-draw rule that applies draws from (a guarantee's only
        among its enabled prizes with stock left); DEFAULT, the whole table, if none applies."""
        for rule in self._pre:
            if (selection := rule(ctx)) is None:
                continue
            if not selection.kept or selection.pool is None:
                return selection
            if live := selection.pool - self._exhausted - self._disabled:
                return Selection(selection.rule, live, kept=True)
        return DEFAULT

    def _pick(self, pool: frozenset[int] | None, rng: RandomSource) -> int | None:
        if pool is not None and len(pool) == 1:
            return next(iter(pool))
        table = self._tables[pool] if pool in self._tables else self._table(pool)
        return table.sample(rng) if table is not None else None

    def _table(self, pool: frozenset[int] | None) -> AliasTable | None:
        if pool not in self._tables:
            weights = {
                p.award_id: p.weight
                for p in self.strategy.prizes
                if (pool is None or p.award_id in pool)
                and p.enabled
                and not (self._renormalise and p.award_id in self._exhausted)
                and not (self.perfect and self.outcome(p.award_id) != WIN)
            }
            if pool is None and not self.perfect:
                weights[self._fallback_id] = (
                    weights.get(self._fallback_id, 0) + self.strategy.remainder
                )
            self._tables[pool] = AliasTable(weights) if any(weights.values()) else None
        return self._tables[pool]

    def fallback(self, rng: RandomSource, reason: str) -> Outcome:
        """The fallback prize, handed out for `reason` (the rule recorded with the draw)."""
        return Outcome(self._fallback_id, reason, self._draw_points(self._fallback_id, rng))

    def _draw_points(self, award_id: int, rng: RandomSource) -> int | None:
        span = self._points.get(award_id)
        if span is None:
            return None
        return span[0] + rng.below(span[1] - span[0] + 1)


def _check_awards(strategy: Strategy, awards: Mapping[int, Award]) -> None:
    for i, prize in enumerate(strategy.prizes):
        if prize.award_id not in awards:
            raise InvalidConfig(f"award {prize.award_id} is not a known award", ("prizes", i))
    if strategy.fallback.award_id not in awards:
        raise InvalidConfig(
            f"fallback award {strategy.fallback.award_id} is not a known award", ("fallback",)
        )


def _compile_pre(strategy: Strategy, awards: Mapping[int, Award]) -> tuple[PreDrawRule, ...]:
    compiled = []
    for name, value in strategy.rules:
        if name not in PRE_DRAW:
            raise InvalidConfig(
                f"unknown pre-draw rule {name!r}; known: {', '.join(PRE_DRAW)}", ("rules", name)
            )
        try:
            compiled.append(PRE_DRAW[name](value, strategy, awards))
        except InvalidConfig as error:
            raise error.at("rules", name) from None
    _check_guarantees_apply(strategy, awards, compiled)
    return tuple(compiled)


NOBODY = DrawContext("", 1)  # a user no listed-users rule lists: user ids are never empty


def _check_guarantees_apply(
    strategy: Strategy, awards: Mapping[int, Award], compiled: list[PreDrawRule]
) -> None:
    """A guarantee published but decided by a rule before it would be a false promise."""
    for i, (name, value) in enumerate(strategy.rules):
        if name != GUARANTEE:
            continue
        for draw in parse_guarantees(value, strategy, awards):
            ctx = replace(NOBODY, draw_count=draw)
            for (earlier, _), rule in zip(strategy.rules[:i], compiled[:i], strict=True):
                if rule(ctx) is not None:
                    raise InvalidConfig(
                        f"guarantee {draw} never applies: the {earlier} rule written before "
                        f"it decides draw {draw}; write the guarantee first",
                        ("rules", name),
                    )


def _compile_post(strategy: Strategy) -> dict[int, tuple[tuple[str, PostDrawRule], ...]]:
    compiled = {}
    for i, prize in enumerate(strategy.prizes):
        rules = []
        for name, value in prize.rules:
            if name not in POST_DRAW:
                raise InvalidConfig(
                    f"unknown prize rule {name!r}; known: {', '.join(POST_DRAW)}",
                    ("prizes", i, "rules", name),
                )
            try:
                rules.append((name, POST_DRAW[name](value)))
            except InvalidConfig as error:
                raise error.at("prizes", i, "rules", name) from None
        if rules:
            compiled[prize.award_id] = tuple(rules)
    return compiled
