"""The welcome pack is owed on a first visit whatever came before it, on every backend: a
top-up or a chance prize that opens the account opens it with the welcome pack first."""

from __future__ import annotations

from dataclasses import replace

import pytest

from raffle.bootstrap import Raffle
from raffle.domain.awards import Award, AwardKind
from raffle.domain.campaign import Campaign
from raffle.domain.draws import WinState
from raffle.domain.quota import QuotaAccount, QuotaPack, Sku
from raffle.service.delivery import deliver, deliver_together, won_message
from raffle.service.draw import Draw, draw
from raffle.service.quotas import TopUp, my_account, top_up
from tests.integration.raffles import ACTIVITY, PRIZE, WELCOME, Build, campaign

OTHER, OTHER_WELCOME, FIVE, SKU, OTHER_SKU = 2, 23, 22, 31, 32
WELCOME_PACK = QuotaPack(WELCOME, 20, 20, 20)  # campaign()'s
OTHER_WELCOME_PACK = QuotaPack(OTHER_WELCOME, 7, 7, 7)


def _two_activities() -> Campaign:
    """Activity 1, whose prize is five chances in activity 2; each has its welcome pack."""
    base = campaign(rate="1")
    first = base.activities[0]
    other = replace(first, id=OTHER, name="other", welcome_pack=OTHER_WELCOME)
    awards = tuple(
        Award(PRIZE, AwardKind.CHANCES, "five more", str(OTHER_SKU)) if a.id == PRIZE else a
        for a in base.awards
    )
    return replace(
        base,
        awards=awards,
        packs=(*base.packs, QuotaPack(FIVE, 5, 5, 5), OTHER_WELCOME_PACK),
        activities=(first, other),
        skus=(Sku(SKU, ACTIVITY, FIVE, 100), Sku(OTHER_SKU, OTHER, FIVE, 100)),
    )


async def _first_visit(raffle: Raffle, user: str, activity: int) -> QuotaAccount:
    return await my_account(
        user, activity, catalogue=raffle.catalogue, shards=raffle.shards, clock=raffle.clock,
        hints=raffle.hints,
    )  # fmt: skip


async def test_a_top_up_before_the_first_visit_keeps_the_welcome_pack(build: Build) -> None:
    raffle = await build(_two_activities(), None)
    done = await top_up(
        TopUp("newcomer", SKU, "pay-1", open_account=True), catalogue=raffle.catalogue,
        config=raffle.uow, shards=raffle.shards, clock=raffle.clock, hints=raffle.hints,
    )  # fmt: skip
    assert done.credited
    assert done.account.total == WELCOME_PACK.total + 5
    account = await _first_visit(raffle, "newcomer", ACTIVITY)
    assert (account.total, account.total_left) == (WELCOME_PACK.total + 5,) * 2
    result = await draw(
        Draw("newcomer", ACTIVITY), catalogue=raffle.catalogue, shards=raffle.shards,
        stock=raffle.stock, rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
    )  # fmt: skip
    assert result.draw_count == 1


@pytest.mark.parametrize("together", [False, True], ids=["alone", "together"])
async def test_a_chance_prize_in_another_activity_keeps_its_welcome_pack(
    build: Build, together: bool
) -> None:
    raffle = await build(_two_activities(), None)
    won = await draw(
        Draw("winner", ACTIVITY), catalogue=raffle.catalogue, shards=raffle.shards,
        stock=raffle.stock, rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
    )  # fmt: skip
    async with raffle.shards.for_user("winner") as uow:
        win = await uow.wins.get(won.order_id)
    assert win is not None
    message = won_message(win, raffle.clock.now())
    if together:
        assert await deliver_together([message], raffle.delivery()) == [None]
    else:
        assert await deliver(message, raffle.delivery())
    async with raffle.shards.for_user("winner") as uow:
        delivered = await uow.wins.get(won.order_id)
    assert delivered is not None
    assert delivered.state is WinState.COMPLETED
    account = await _first_visit(raffle, "winner", OTHER)
    assert account.total == OTHER_WELCOME_PACK.total + 5
