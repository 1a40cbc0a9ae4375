"""Guarantees by prize level (`10:level<=3`): the pool is the prizes of that level or better
that can win there, refused at load without one, published with the level, and frozen."""

from dataclasses import replace
from fractions import Fraction

import pytest

from raffle.adapters.memory_stock import MemoryStock
from raffle.adapters.randomness import SeededRandomSource
from raffle.domain.awards import Award, AwardKind
from raffle.domain.disclosure import Guarantee, disclosed_rules
from raffle.domain.engine import DrawEngine
from raffle.domain.errors import InvalidConfig
from raffle.domain.prize_cards import PrizeCard
from raffle.domain.rules import DrawContext, frozen_terms, level_pools
from raffle.domain.strategy import Strategy
from tests.unit.builders import FALLBACK, awards, strategy

RATES = {2: "0.5", 3: "0.25", 4: "0.1", 5: "0.05", 6: "0.01"}
LEVELS = {2: None, 3: 3, 4: 2, 5: 4, 6: 1}  # award 2 has no level; 6 is 一等奖


def leveled(rules: tuple[tuple[str, str], ...], **options: object) -> Strategy:
    built = strategy(RATES, rules=rules, **options)  # type: ignore[arg-type]
    prizes = tuple(replace(p, card=PrizeCard(level=LEVELS[p.award_id])) for p in built.prizes)
    return replace(built, prizes=prizes)


def relevel(s: Strategy, award_id: int, level: int | None) -> Strategy:
    prizes = tuple(
        replace(p, card=replace(p.card, level=level)) if p.award_id == award_id else p
        for p in s.prizes
    )
    return replace(s, prizes=prizes)


def test_the_pool_is_the_prizes_of_that_level_or_better_at_their_relative_rates() -> None:
    e = DrawEngine(leveled((("guarantee", "10:level<=3"),)), awards(*RATES))
    # 3 (level 3), 4 (level 2) and 6 (level 1): not 5 (level 4) nor 2 (no level)
    assert e.odds(DrawContext("ann", 10)) == {
        3: Fraction(25, 36),
        4: Fraction(10, 36),
        6: Fraction(1, 36),
    }
    assert e.odds(DrawContext("ann", 9)) == DrawEngine(leveled(()), awards(*RATES)).odds(
        DrawContext("ann", 9)
    )


def test_prizes_of_the_level_that_cannot_win_there_are_left_out() -> None:
    built = leveled((("guarantee", "10:level<=2"),), locks={6: 20})
    known = awards(*RATES) | {4: Award(4, AwardKind.THANKS, "thanks")}
    with pytest.raises(
        InvalidConfig,
        match=r"guarantee 10: no prize of level 2 or better can win there \(award 4 is a "
        r"thanks award, not a win; award 6 is locked until draw 20\)",
    ):
        DrawEngine(built, known)
    e = DrawEngine(leveled((("guarantee", "10:level<=2"),), locks={6: 20}), awards(*RATES))
    assert e.odds(DrawContext("ann", 10)) == {4: Fraction(1)}  # 6 is locked at draw 10


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ("10:level<=0", r"guarantee 10: 'level<=0' must name a level from 1 to 99"),
        ("10:level<=100", r"must name a level from 1 to 99"),
        ("10:level<=x", r"must name a level from 1 to 99, e.g. 'level<=3'"),
        ("10:level<=", r"must name a level"),
        ("10:level<=³", r"must name a level"),
        ("10:level>=3", r"'level>=3' is not an award id"),
    ],
)
def test_a_level_guarantee_written_wrong_is_refused_at_load(rule: str, problem: str) -> None:
    with pytest.raises(InvalidConfig, match=problem):
        DrawEngine(leveled((("guarantee", rule),)), awards(*RATES))


def test_a_level_no_prize_has_is_refused_at_load_with_the_reason() -> None:
    unleveled = strategy(RATES, rules=(("guarantee", "10:level<=3"),))
    with pytest.raises(InvalidConfig, match="guarantee 10: no prize has level 3 or better"):
        DrawEngine(unleveled, awards(*RATES))
    fifths = leveled(())
    for award_id in (3, 4, 5, 6):
        fifths = relevel(fifths, award_id, 5)
    with pytest.raises(InvalidConfig, match="no prize has level 4 or better"):
        DrawEngine(replace(fifths, rules=(("guarantee", "1:level<=4"),)), awards(*RATES))
    e = DrawEngine(replace(fifths, rules=(("guarantee", "1:level<=5"),)), awards(*RATES))
    assert e.odds(DrawContext("ann", 1)) == {
        3: Fraction(25, 41),
        4: Fraction(10, 41),
        5: Fraction(5, 41),
        6: Fraction(1, 41),
    }


def test_the_published_guarantee_names_its_level_and_its_prizes() -> None:
    built = leveled((("guarantee", "1:win 10:level<=2 20:3"),), stock={6: 1})
    e = DrawEngine(built, awards(*RATES))
    ten = DrawContext("ann", 10)
    assert disclosed_rules(built, awards(*RATES), e.exhausted) == (
        Guarantee(1, frozenset({2, 3, 4, 5, 6}), e.odds(DrawContext("ann", 1))),
        Guarantee(10, frozenset({4, 6}), e.odds(ten), level=2),
        Guarantee(20, frozenset({3}), {3: Fraction(1)}),
    )
    assert e.odds(ten) == {4: Fraction(10, 11), 6: Fraction(1, 11)}
    gone = disclosed_rules(built, awards(*RATES), frozenset({6}))
    assert gone[1] == Guarantee(10, frozenset({4, 6}), {4: Fraction(1)}, level=2)


def test_a_level_change_that_moves_a_prize_into_or_out_of_the_pool_changes_the_terms() -> None:
    published = leveled((("guarantee", "10:level<=3"),))
    assert level_pools(published) == {10: frozenset({3, 4, 6})}
    for award_id, level in ((5, 3), (3, 4), (6, None), (2, 1)):  # in or out of the pool
        changed = relevel(published, award_id, level)
        assert changed.terms() == published.terms()  # cards are not terms…
        assert frozen_terms(changed) != frozen_terms(published), (award_id, level)  # …pools are
    for award_id, level in ((5, 9), (3, 1), (6, 2), (2, None)):  # the pool stays as it was
        assert frozen_terms(relevel(published, award_id, level)) == frozen_terms(published)
    plain = strategy(RATES, rules=(("guarantee", "10:3,4"),))
    assert frozen_terms(relevel(plain, 3, 1)) == frozen_terms(plain)  # no guarantee by level
    assert level_pools(plain) == {}


def test_a_level_guarantee_draws_only_its_pool() -> None:
    e = DrawEngine(leveled((("guarantee", "10:level<=2"),)), awards(*RATES))
    rng, stock = SeededRandomSource(14), MemoryStock([e.strategy])
    outcomes = [e.draw(DrawContext("ann", 10), rng, stock) for _ in range(2000)]
    assert {o.award_id for o in outcomes} == {4, 6}
    assert {o.rule for o in outcomes} == {"guarantee"}
    assert FALLBACK not in {o.award_id for o in outcomes}


def test_a_disabled_prize_of_the_level_gets_no_published_chance_as_it_is_never_drawn() -> None:
    built = leveled((("guarantee", "10:level<=3"),))
    off = tuple(replace(p, enabled=p.award_id != 3) for p in built.prizes)
    e = DrawEngine(replace(built, prizes=off), awards(*RATES))
    [published] = disclosed_rules(e.strategy, awards(*RATES), e.exhausted)
    assert (
        published.chances
        == e.odds(DrawContext("ann", 10))
        == {
            4: Fraction(10, 11),
            6: Fraction(1, 11),
        }
    )
