"""Disclosed rules in the engine: listed users (once `blacklist`) and guarantees by draw number."""

from dataclasses import replace
from fractions import Fraction

import pytest

from raffle.adapters.memory_stock import MemoryStock
from raffle.adapters.randomness import SeededRandomSource
from raffle.domain.awards import Award, AwardKind
from raffle.domain.disclosure import Guarantee, ListedGroup, disclosed_rules
from raffle.domain.engine import DrawEngine, Outcome
from raffle.domain.errors import InvalidConfig
from raffle.domain.rules import DrawContext
from raffle.domain.strategy import Exhaustion, Fallback
from tests.unit.builders import FALLBACK, awards, engine, strategy

RATES = {2: "0.5", 3: "0.25", 4: "0.1"}


def ctx(draw_count: int, user: str = "alice") -> DrawContext:
    return DrawContext(user, draw_count)


def draws(e: DrawEngine, c: DrawContext, n: int, stock: MemoryStock | None = None) -> list[Outcome]:
    rng, stock = SeededRandomSource(2), stock or MemoryStock([e.strategy])
    return [e.draw(c, rng, stock) for _ in range(n)]


def test_the_old_name_blacklist_reads_as_listed() -> None:
    s = strategy(RATES, rules=(("blacklist", "9:bob"), ("weight", "60:2")))
    assert s.rules == (("listed", "9:bob"), ("weight", "60:2"))
    assert s == strategy(RATES, rules=(("listed", "9:bob"), ("weight", "60:2")))
    with pytest.raises(
        InvalidConfig, match=r"'listed' is given twice \('blacklist' is its old name\)"
    ):
        strategy(RATES, rules=(("blacklist", "9:bob"), ("listed", "9:eve")))


def test_the_guaranteed_draw_picks_by_rate_among_the_named_prizes() -> None:
    e = engine(RATES, rules=(("guarantee", "10:2,3"),))
    assert e.odds(ctx(10)) == {2: Fraction(2, 3), 3: Fraction(1, 3)}
    outcomes = draws(e, ctx(10), 3000)
    assert {o.award_id for o in outcomes} == {2, 3}
    assert {o.rule for o in outcomes} == {"guarantee"}
    for other in (1, 9, 11):  # only the 10th draw: the others are ordinary
        assert e.odds(ctx(other)) == engine(RATES).odds(ctx(other))


def test_win_means_every_prize_that_can_win_at_that_draw() -> None:
    rates = {FALLBACK: "0.2", 2: "0.5", 3: "0.25", 4: "0.05", 5: "0"}
    built = strategy(rates, locks={4: 2}, rules=(("guarantee", "1:win 2:win"),))
    e = DrawEngine(built, awards(2, 3, 4, 5) | {3: Award(3, AwardKind.THANKS, "thanks")})
    # not the fallback, not "thanks", not a prize of rate 0, not one locked until draw 2
    assert e.odds(ctx(1)) == {2: Fraction(1)}
    assert e.odds(ctx(2)) == {2: Fraction(10, 11), 4: Fraction(1, 11)}


def test_a_guarantee_draws_only_among_its_prizes_with_stock_in_either_mode() -> None:
    for mode in Exhaustion:
        e = engine(RATES, stock={2: 5}, exhaustion=mode, rules=(("guarantee", "1:2,3"),))
        outcomes = draws(e, ctx(1), 400)
        assert sum(o.award_id == 2 for o in outcomes) == 5
        assert {o.award_id for o in outcomes} == {2, 3}, mode  # never the fallback
        assert e.odds(ctx(1)) == {3: Fraction(1)}


class EmptyShelf:
    """Stock that has none of `award` although the engine has not heard it yet."""

    def __init__(self, award: int) -> None:
        self.award = award

    def take(self, strategy_id: int, award_id: int) -> bool:
        return award_id != self.award


def test_a_guaranteed_prize_found_empty_is_drawn_again_among_the_rest() -> None:
    e = engine(RATES, stock={2: 10, 3: 10}, rules=(("guarantee", "1:2,3"),))
    outcomes = [e.draw(ctx(1), SeededRandomSource(s), EmptyShelf(2)) for s in range(50)]
    assert {(o.award_id, o.rule) for o in outcomes} == {(3, "guarantee")}


def test_with_none_of_its_prizes_left_the_guaranteed_draw_is_an_ordinary_one() -> None:
    e = engine(RATES, stock={2: 1, 3: 1}, rules=(("guarantee", "1:2,3"),))
    stock = MemoryStock([e.strategy])
    first = draws(e, ctx(1), 2, stock)
    assert sorted(o.award_id for o in first) == [2, 3]
    later = draws(e, ctx(1), 500, stock)  # the first of them finds both gone
    assert e.exhausted == {2, 3}
    assert e.odds(ctx(1)) == {4: Fraction(1, 10), FALLBACK: Fraction(9, 10)}
    assert {o.award_id for o in later} == {4, FALLBACK}
    assert "guarantee" not in {o.rule for o in later}


def test_a_guarantee_of_disabled_prizes_only_is_an_ordinary_draw() -> None:
    built = strategy(RATES, rules=(("guarantee", "1:2 2:2,3"),))
    disabled = replace(
        built, prizes=tuple(replace(p, enabled=p.award_id != 2) for p in built.prizes)
    )
    e = DrawEngine(disabled, awards(*RATES))
    ordinary = e.odds(ctx(5))
    assert 2 not in ordinary
    assert e.odds(ctx(1)) == ordinary  # the only prize it names is disabled: it steps aside
    assert e.odds(ctx(2)) == {3: Fraction(1)}  # among the enabled ones it names
    outcomes = draws(e, ctx(1), 300)
    assert "guarantee" not in {o.rule for o in outcomes}
    assert 2 not in {o.award_id for o in outcomes}


def test_listed_users_before_a_guarantee_keep_their_prize() -> None:
    e = engine(RATES, rules=(("listed", "9:bob"), ("guarantee", "1:win")))
    assert e.odds(ctx(1, user="bob")) == {9: 1}
    assert set(e.odds(ctx(1))) == {2, 3, 4}


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ("10", "guarantee must read 'draw:award,award', 'draw:win' or 'draw:level<=level'"),
        ("0:2", "guarantee must read"),
        ("", "guarantee rule has no draws"),
        ("3:2 3:3", "guarantee for draw 3 is given twice"),
        ("3:77", "guarantee 3: award 77 is not a prize"),
        ("3:x", "'x' is not an award id"),
        ("3:1", "guarantee 3: award 1 is not a prize"),
        ("2:5", "guarantee 2: award 5 has rate 0, so it is never drawn"),
        ("2:4", "guarantee 2: award 4 is locked until draw 3"),
        ("2:6", "guarantee 2: award 6 is the fallback, not a win"),
        ("2:7", "guarantee 2: award 7 is a thanks award, not a win"),
    ],
)
def test_a_guarantee_that_could_not_be_kept_is_refused_at_load(rule: str, problem: str) -> None:
    rates = {2: "0.5", 4: "0.1", 5: "0", 6: "0.1", 7: "0.1"}
    built = strategy(rates, locks={4: 3}, fallback=Fallback(6), rules=(("guarantee", rule),))
    known = awards(2, 4, 5, 6) | {7: Award(7, AwardKind.THANKS, "thanks")}
    with pytest.raises(InvalidConfig, match=problem):
        DrawEngine(built, known)


def test_a_guarantee_a_rule_before_it_decides_is_refused() -> None:
    shadowed = strategy(RATES, rules=(("weight", "5:2,3"), ("guarantee", "1:4 8:4")))
    with pytest.raises(InvalidConfig, match="guarantee 8 never applies: the weight rule"):
        DrawEngine(shadowed, awards(*RATES))
    first = strategy(RATES, rules=(("guarantee", "1:4 8:4"), ("weight", "5:2,3")))
    e = DrawEngine(first, awards(*RATES))
    assert e.odds(ctx(8)) == {4: Fraction(1)}
    assert e.odds(ctx(7)) == {2: Fraction(2, 3), 3: Fraction(1, 3)}


def test_the_published_rules_say_how_many_are_listed_and_what_each_guarantee_gives() -> None:
    built = strategy(
        RATES, stock={2: 3}, rules=(("listed", "9:bob,carol,dave"), ("guarantee", "10:2,3 1:win"))
    )
    e = DrawEngine(built, awards(*RATES, 9))
    published = disclosed_rules(built, awards(*RATES, 9), e.exhausted)
    assert published == (
        ListedGroup(9, 3, in_force=True),
        Guarantee(1, frozenset({2, 3, 4}), e.odds(ctx(1))),
        Guarantee(10, frozenset({2, 3}), e.odds(ctx(10))),
    )
    assert "bob" not in repr(published)  # the group's size, never its members
    gone = disclosed_rules(built, awards(*RATES, 9), frozenset({2, 3, 9}))
    assert gone[0].in_force is False
    assert gone[1] == Guarantee(1, frozenset({2, 3, 4}), {4: Fraction(1)})
    assert gone[2] == Guarantee(10, frozenset({2, 3}), {})
    assert not gone[2].in_force
