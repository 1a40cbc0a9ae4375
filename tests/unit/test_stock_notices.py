"""Stock notices: which take crosses a threshold, and the draw that writes its notice (or,
when it did not commit, whether the crossing still stands)."""

import json
from dataclasses import replace
from decimal import Decimal

import pytest

from raffle.adapters.campaign_file import InvalidCampaignFile, parse_campaign
from raffle.adapters.campaign_writer import write_campaign
from raffle.domain.errors import InvalidConfig
from raffle.domain.notices import NOTICE, NoticeKind, crossed, still_crossed, warned
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
from tests.unit.usecase_world import PRIZE, STRATEGY, World, world

WARNED = StrategyPrize(PRIZE, Decimal("0.1"), stock=100, warning_surplus=20)


@pytest.mark.parametrize(
    ("left", "kinds"),
    [
        (21, ()),
        (20, (NoticeKind.STOCK_WARNING,)),
        (19, ()),
        (1, ()),
        (0, (NoticeKind.STOCK_ZERO,)),
    ],
)
def test_only_the_take_that_lands_on_a_threshold_crosses_it(
    left: int, kinds: tuple[NoticeKind, ...]
) -> None:
    assert crossed(WARNED, left) == kinds


def test_a_prize_without_a_threshold_crosses_only_zero() -> None:
    plain = StrategyPrize(PRIZE, Decimal("0.1"), stock=100)
    assert [left for left in range(101) if crossed(plain, left)] == [0]
    assert crossed(StrategyPrize(PRIZE, Decimal("0.1")), 0) == ()  # unlimited: never


def test_a_crossing_stands_while_the_stock_stays_at_or_below_it() -> None:
    warning = NoticeKind.STOCK_WARNING
    assert still_crossed(WARNED, warning, 20)  # others took past it meanwhile...
    assert still_crossed(WARNED, warning, 7)
    assert still_crossed(WARNED, warning, None)  # ...or the unit could not come back
    assert not still_crossed(WARNED, warning, 21)  # back above: the next take crosses again
    assert still_crossed(WARNED, NoticeKind.STOCK_ZERO, 0)
    assert not still_crossed(WARNED, NoticeKind.STOCK_ZERO, 1)


def test_the_badge_shows_at_or_below_the_threshold() -> None:
    assert [warned(WARNED, left) for left in (21, 20, 0, None)] == [False, True, True, False]


@pytest.mark.parametrize(("stock", "surplus"), [(None, 5), (10, 0), (10, 10), (10, 11), (1, 1)])
def test_a_threshold_needs_stock_and_must_lie_between_one_and_the_stock(
    stock: int | None, surplus: int
) -> None:
    with pytest.raises(InvalidConfig) as error:
        StrategyPrize(PRIZE, Decimal("0.1"), stock=stock, warning_surplus=surplus)
    assert error.value.path == ("warning_surplus",)


def test_the_threshold_is_not_part_of_the_published_odds() -> None:
    # A running activity's odds are frozen; its warning may still change.
    published = Strategy(STRATEGY, (WARNED,), Fallback(PRIZE + 1))
    warned_later = replace(published, prizes=(replace(WARNED, warning_surplus=50),))
    assert warned_later != published
    assert warned_later.terms() == published.terms()


def _warned_world(stock: int, surplus: int) -> World:
    w = world(rate="1", stock=stock)
    strategy = w.config.strategies[STRATEGY]
    prize = replace(strategy.prizes[0], warning_surplus=surplus)
    w.config.strategies[STRATEGY] = replace(strategy, prizes=(prize,))
    return w


def _notices(w: World) -> list[dict[str, object]]:
    return [json.loads(m.payload) for m in w.shards.store.outbox if m.topic == NOTICE]


async def test_the_crossing_draw_writes_its_notice_with_its_win() -> None:
    w = _warned_world(stock=3, surplus=1)
    await w.draw("alice")
    assert _notices(w) == []
    crossing = await w.draw("bob")
    [notice] = _notices(w)
    assert (notice["kind"], notice["left"], notice["order_id"]) == (
        "stock_warning", 1, crossing.order_id,
    )  # fmt: skip
    last = await w.draw("carol")
    assert [(n["kind"], n["order_id"]) for n in _notices(w)][1:] == [("stock_zero", last.order_id)]


def _commit_fails_once(w: World, meanwhile: int = 0) -> None:
    """The next draw's commit fails, after `meanwhile` units were taken by other draws."""
    original, failures = w.shards.for_user, [RuntimeError("disk full")]

    def failing(user_id: str):  # type: ignore[no-untyped-def]
        uow = original(user_id)
        if failures:
            error = failures.pop()

            async def refuse() -> None:
                w.stock.levels[STRATEGY, PRIZE] -= meanwhile
                raise error

            uow.commit = refuse  # type: ignore[method-assign]
        return uow

    w.shards.for_user = failing  # type: ignore[method-assign]


async def test_a_crossing_whose_draw_failed_is_crossed_again_once_the_unit_is_back() -> None:
    w = _warned_world(stock=3, surplus=2)
    _commit_fails_once(w)
    with pytest.raises(RuntimeError):
        await w.draw("alice")  # took the unit that left 2, then gave it back
    assert _notices(w) == []
    crossing = await w.draw("bob")
    assert [(n["kind"], n["order_id"]) for n in _notices(w)] == [
        ("stock_warning", crossing.order_id)
    ]


async def test_a_crossing_whose_draw_failed_after_others_took_past_it_is_written_alone() -> None:
    w = _warned_world(stock=5, surplus=3)
    await w.draw("alice")  # 4 left
    _commit_fails_once(w, meanwhile=1)  # takes the 3rd-last unit; another draw the next
    with pytest.raises(RuntimeError):
        await w.draw("bob")
    # The unit came back with 3 left: the stock never rose above the threshold again.
    assert w.stock.levels[STRATEGY, PRIZE] == 3
    [notice] = _notices(w)
    assert (notice["kind"], notice["left"]) == ("stock_warning", 3)
    await w.draw("carol")  # 2 left: past the threshold, no second notice
    assert len(_notices(w)) == 1


CAMPAIGN = """
awards:
  - {id: 1, kind: thanks, title: Thanks}
  - {id: 2, kind: physical, title: Lamp}
strategies:
  - id: 10
    fallback: 1
    prizes:
      - {award: 2, rate: 0.5, stock: 100, warning_surplus: 20}
"""


def test_a_campaign_file_carries_the_threshold_and_writes_it_back() -> None:
    campaign = parse_campaign(CAMPAIGN, "test")
    assert campaign.strategies[0].prizes[0].warning_surplus == 20
    written = write_campaign(campaign)
    assert "warning_surplus: 20" in written
    assert parse_campaign(written, "written").strategies[0].prizes[0].warning_surplus == 20


def test_a_threshold_at_the_stock_is_refused_at_its_place_in_the_file() -> None:
    with pytest.raises(InvalidCampaignFile) as error:
        parse_campaign(CAMPAIGN.replace("warning_surplus: 20", "warning_surplus: 100"), "test")
    assert "line 9: strategies.0.prizes.0.warning_surplus: warning_surplus must be" in str(
        error.value
    )
