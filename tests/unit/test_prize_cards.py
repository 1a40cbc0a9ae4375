"""A prize's card and switch in the domain: each field bounded, images only uploaded or https,
one prize a nine-grid cell, a disabled prize out of the odds, the card no part of them."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

import pytest

from raffle.domain.awards import Award, AwardKind
from raffle.domain.engine import DISABLED, DrawEngine
from raffle.domain.errors import InvalidConfig
from raffle.domain.prize_cards import PrizeCard, image_problem
from raffle.domain.rules import DrawContext
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize

AWARDS = {i: Award(i, AwardKind.POINTS, f"award {i}", "1") for i in (1, 2, 3)}


def _strategy(*prizes: StrategyPrize, rules: tuple[tuple[str, str], ...] = ()) -> Strategy:
    return Strategy(9, prizes, Fallback(3), rules)


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"level": 0}, ("level",)),
        ({"level": 100}, ("level",)),
        ({"level_name": "一" * 33}, ("level_name",)),
        ({"description": "x" * 256}, ("description",)),
        ({"win_tips": "x" * 256}, ("win_tips",)),
        ({"cell": 9}, ("cell",)),
        ({"cell": 0}, ("cell",)),
        ({"value_cents": -1}, ("value_cents",)),
        ({"priority": 2**31}, ("priority",)),
        ({"image": "http://cdn.example.com/a.png"}, ("image",)),
    ],
)
def test_a_field_out_of_bounds_is_refused_at_its_path(
    fields: dict[str, object], path: tuple[str, ...]
) -> None:
    with pytest.raises(InvalidConfig) as refused:
        PrizeCard(**fields)  # type: ignore[arg-type]
    assert refused.value.path == path


@pytest.mark.parametrize(
    "image",
    [
        "ftp://cdn.example.com/a.png",
        "javascript:alert(1)",
        "data:image/png;base64,AAAA",
        "https://",
        "https://user@cdn.example.com/a.png",
        "https://cdn.example.com/a b.png",
        "https://cdn.example.com/" + "a" * 600,
        "A" * 64,  # an id is lower-case hex
        "images/gold.png",  # a path is a campaign file's, never a card's
    ],
)
def test_an_image_is_an_uploaded_id_or_an_https_url(image: str) -> None:
    assert image_problem(image) is not None
    assert image_problem("") is None
    assert image_problem("0" * 64) is None
    assert image_problem("https://cdn.example.com/prizes/一等奖.png?v=2") is None


def test_two_prizes_of_a_strategy_never_share_a_cell() -> None:
    first = StrategyPrize(1, Decimal("0.1"), card=PrizeCard(cell=4))
    with pytest.raises(InvalidConfig) as refused:
        _strategy(first, StrategyPrize(2, Decimal("0.1"), card=PrizeCard(cell=4)))
    assert refused.value.path == ("prizes", 1, "cell")
    assert _strategy(first, StrategyPrize(2, Decimal("0.1"), card=PrizeCard(cell=5)))


def test_a_disabled_prizes_rate_goes_to_the_fallback() -> None:
    on = _strategy(StrategyPrize(1, Decimal("0.25")), StrategyPrize(2, Decimal("0.5")))
    off = replace(on, prizes=(on.prizes[0], replace(on.prizes[1], enabled=False)))
    odds = DrawEngine(off, AWARDS).odds(DrawContext("u", 1))
    assert odds == {1: Fraction(1, 4), 3: Fraction(3, 4)}
    assert off.remainder == 750_000


def test_a_rule_naming_a_disabled_prize_gives_the_fallback() -> None:
    strategy = _strategy(
        StrategyPrize(1, Decimal("0.25"), enabled=False), rules=(("blacklist", "1:eve"),)
    )
    engine = DrawEngine(strategy, AWARDS)

    class Never:
        def below(self, n: int) -> int:
            return 0

    outcome = engine.choose(DrawContext("eve", 1), Never())
    assert (outcome.award_id, outcome.rule) == (3, DISABLED)
    assert engine.odds(DrawContext("eve", 1)) == {3: Fraction(1)}


def test_the_card_is_no_part_of_the_terms_the_switch_is() -> None:
    plain = _strategy(StrategyPrize(1, Decimal("0.25")))
    shown = replace(plain, prizes=(replace(plain.prizes[0], card=PrizeCard(level=1, cell=1)),))
    switched = replace(plain, prizes=(replace(plain.prizes[0], enabled=False),))
    assert shown != plain
    assert shown.terms() == plain.terms()
    assert switched.terms() != plain.terms()
