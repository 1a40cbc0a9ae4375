import pytest

from raffle.domain.quota import QuotaPack, SkuSoldOut
from raffle.domain.users import UnknownUser, User
from raffle.service.catalogue import UnknownSku
from raffle.service.quotas import TopUp, my_account, top_up
from tests.unit.usecase_world import ACTIVITY, SKU, world


async def test_a_top_up_credits_the_pack_once_per_business_number() -> None:
    w = world(welcome=None)
    first = await w.top_up(business_no="pay-1")
    again = await w.top_up(business_no="pay-1")
    assert first.credited
    assert not again.credited
    assert (again.account.total, again.account.total_left, again.account.day_left) == (5, 5, 5)
    assert w.config.sku_left[SKU] == 99


async def test_different_business_numbers_credit_again() -> None:
    w = world(welcome=None)
    await w.top_up(business_no="pay-1")
    result = await w.top_up(business_no="pay-2")
    assert result.account.total_left == 10
    assert w.config.sku_left[SKU] == 98


async def test_a_sold_out_sku_credits_nothing() -> None:
    w = world(welcome=None, sku_stock=1)
    await w.top_up(business_no="a")
    with pytest.raises(SkuSoldOut):
        await w.top_up(user="bob", business_no="b")
    assert ("bob", ACTIVITY) not in w.shards.store.accounts
    assert w.config.sku_left[SKU] == 0


async def test_a_user_with_no_account_is_credited_only_when_the_top_up_opens_it() -> None:
    w = world(welcome=None)

    async def grant(user: str, business_no: str, open_account: bool = False) -> bool:
        cmd = TopUp(user, SKU, business_no, open_account)
        done = await top_up(
            cmd, catalogue=w.catalogue, config=w.uow, shards=w.shards, clock=w.clock, hints=w.hints
        )
        return done.credited

    with pytest.raises(UnknownUser):
        await grant("ghost", "p-1")
    assert ("ghost", ACTIVITY) not in w.shards.store.accounts
    assert w.config.sku_left[SKU] == 100
    assert await grant("ghost", "p-1", open_account=True)
    w.config.users["carol"] = User("carol", "hash")
    assert await grant("carol", "p-2")
    assert w.config.sku_left[SKU] == 98


async def test_an_unknown_sku_is_an_error() -> None:
    w = world()
    with pytest.raises(UnknownSku):
        await top_up(
            TopUp("alice", 999, "x", open_account=True),
            catalogue=w.catalogue,
            config=w.uow,
            shards=w.shards,
            clock=w.clock,
            hints=w.hints,
        )


async def test_a_top_up_adds_to_todays_remaining_chances() -> None:
    w = world()
    for _ in range(3):
        await w.draw()
    result = await w.top_up()
    assert (result.account.total_left, result.account.day_left) == (12, 5)
    assert (await w.draw()).draw_count == 4


async def test_the_first_look_at_an_account_opens_it_with_the_welcome_pack() -> None:
    w = world()
    account = await my_account(
        "carol", ACTIVITY, catalogue=w.catalogue, shards=w.shards, clock=w.clock, hints=w.hints
    )
    assert (account.total, account.chances, account.draws) == (10, 3, 0)
    again = await my_account(
        "carol", ACTIVITY, catalogue=w.catalogue, shards=w.shards, clock=w.clock, hints=w.hints
    )
    assert again == account


def test_a_packs_chances_on_its_own_are_its_tightest_limit() -> None:
    # A first visit draws in its batch only with a chance in every limit of the welcome pack.
    assert QuotaPack(1, 20, 5, 10).chances == 5
    assert QuotaPack(1, 20, 20, 0).chances == 0
