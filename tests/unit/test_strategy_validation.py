from decimal import Decimal

import pytest

from raffle.domain.awards import Award, AwardKind, parse_points_range
from raffle.domain.errors import InvalidConfig
from raffle.domain.strategy import Fallback, StrategyPrize, format_fallback, parse_fallback
from tests.unit.builders import engine, strategy


@pytest.mark.parametrize(
    ("rates", "message"),
    [
        ({2: "0.6", 3: "0.5"}, "sum to 1.1"),
        ({2: "-0.1"}, "between 0 and 1"),
        ({2: "1.5"}, "between 0 and 1"),
        ({2: "0.0000001"}, "more than 6 decimal places"),
        ({2: "NaN"}, "between 0 and 1"),
    ],
)
def test_bad_rates_are_refused_with_a_clear_message(rates: dict[int, str], message: str) -> None:
    with pytest.raises(InvalidConfig, match=message):
        strategy(rates)


def test_rates_may_sum_to_exactly_one() -> None:
    assert strategy({2: "0.999999", 3: "0.000001"}).remainder == 0


def test_negative_stock_is_refused() -> None:
    with pytest.raises(InvalidConfig, match="stock must not be negative") as error:
        StrategyPrize(2, Decimal("0.1"), stock=-1)
    assert error.value.path == ("stock",)


def test_a_prize_listed_twice_is_refused() -> None:
    with pytest.raises(InvalidConfig, match="listed twice"):
        strategy({2: "0.1"}).__class__(1, (StrategyPrize(2, Decimal("0.1")),) * 2, Fallback(1))


def test_the_fallback_must_be_unlimited() -> None:
    with pytest.raises(InvalidConfig, match="unlimited stock"):
        strategy({1: "0.1"}, stock={1: 10})


def test_unknown_awards_are_refused_with_their_position() -> None:
    from raffle.domain.engine import DrawEngine

    with pytest.raises(InvalidConfig, match="award 5 is not a known award") as error:
        DrawEngine(
            strategy({2: "0.1", 5: "0.1"}),
            {1: Award(1, AwardKind.THANKS, "t"), 2: Award(2, AwardKind.THANKS, "t")},
        )
    assert error.value.path == ("prizes", 1)


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ((("jackpot", "1"),), "unknown pre-draw rule 'jackpot'"),
        ((("weight", "60:102,999"),), "award 999 is not a prize"),
        ((("weight", "sixty:102"),), "weight tier must read"),
        ((("weight", "60:102 60:103"),), "threshold 60 is given twice"),
        ((("weight", "60:104"),), "rate 0"),
        ((("listed", "102"),), "listed must read"),
    ],
)
def test_bad_rules_are_refused(rules: tuple[tuple[str, str], ...], message: str) -> None:
    with pytest.raises(InvalidConfig, match=message) as error:
        engine({102: "0.1", 103: "0.1", 104: "0"}, rules=rules)
    assert error.value.path[0] == "rules"


def test_a_listed_award_must_exist() -> None:
    from raffle.domain.engine import DrawEngine

    with pytest.raises(InvalidConfig, match="listed award 555 is not a known award"):
        DrawEngine(
            strategy({}, rules=(("listed", "555:bob"),)), {1: Award(1, AwardKind.THANKS, "t")}
        )


@pytest.mark.parametrize("lock", ["0", "-1", "two"])
def test_bad_locks_are_refused(lock: str) -> None:
    from raffle.domain.engine import DrawEngine
    from raffle.domain.strategy import Strategy

    s = Strategy(1, (StrategyPrize(2, Decimal("0.1"), rules=(("lock", lock),)),), Fallback(1))
    with pytest.raises(InvalidConfig, match="lock must be") as error:
        DrawEngine(s, {1: Award(1, AwardKind.THANKS, "t"), 2: Award(2, AwardKind.THANKS, "t")})
    assert error.value.path == ("prizes", 0, "rules", "lock")


@pytest.mark.parametrize("text", ["1", "1,", "a,b", "5,1", "1,2,3", "-1,4"])
def test_bad_points_ranges_are_refused(text: str) -> None:
    with pytest.raises(InvalidConfig, match="points range"):
        parse_points_range(text)


def test_the_luck_rule_round_trips() -> None:
    assert parse_fallback("101:1,100") == Fallback(101, (1, 100))
    assert parse_fallback("101") == Fallback(101)
    assert format_fallback(Fallback(101, (1, 100))) == "101:1,100"
    with pytest.raises(InvalidConfig):
        parse_fallback("lucky")


def test_an_award_checks_its_config() -> None:
    assert Award(1, AwardKind.RANDOM_POINTS, "p", "1,100").points_range == (1, 100)
    with pytest.raises(InvalidConfig):
        Award(1, AwardKind.POINTS, "p", "many")
