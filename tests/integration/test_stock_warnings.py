"""Stock warnings on every stock backend: of 300 draws at once, exactly one crosses the
prize's warning threshold and one empties it, each writing one notice with its win."""

from __future__ import annotations

from raffle.service.draw import Draw
from tests.integration.notices import kinds, notices
from tests.integration.raffles import ACTIVITY, PRIZE, STRATEGY, Build, campaign
from tests.integration.test_draw_concurrency import run

THRESHOLD = 20


async def test_three_hundred_draws_crossing_a_threshold_notice_it_once(build: Build) -> None:
    raffle = await build(campaign(rate="1", stock=300, warning=THRESHOLD), None)
    draws = [Draw(f"user{n:03d}", ACTIVITY) for n in range(300)]

    results, failures = await run(raffle, draws)

    assert len(results) == 300
    assert not +failures
    assert all(r.award_id == PRIZE for r in results)
    found = await notices(raffle)
    assert kinds(found) == ["stock_warning", "stock_zero"]
    warning = next(n for n in found if n["kind"] == "stock_warning")
    assert (warning["strategy_id"], warning["award_id"]) == (STRATEGY, PRIZE)
    assert (warning["left"], warning["stock"], warning["warning_surplus"]) == (20, 300, 20)
    # Written with the win of the draw whose take crossed: that draw committed.
    assert warning["order_id"] in {r.order_id for r in results}


async def test_a_prize_without_a_threshold_notices_only_running_out(build: Build) -> None:
    raffle = await build(campaign(rate="1", stock=50), None)

    results, _ = await run(raffle, [Draw(f"user{n:03d}", ACTIVITY) for n in range(80)])

    assert sum(r.award_id == PRIZE for r in results) == 50
    assert kinds(await notices(raffle)) == ["stock_zero"]
