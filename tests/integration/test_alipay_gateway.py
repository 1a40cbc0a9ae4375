"""The Alipay adapter against the simulator over real HTTP: precreate, query, close and
refund round trips, refunds idempotent by out_request_no, answers whose signature fails
refused, and the simulator's signed notifications verified and retried until `success`."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from raffle.adapters.alipay.gateway import AlipayGateway, Merchant
from raffle.adapters.alipay.signing import (
    NOTIFICATION_UNSIGNED,
    private_key,
    public_key,
    sign,
    signing_string,
)
from raffle.adapters.clock import SystemClock
from raffle.service.ports.payments import GatewayRefused, GatewayUnavailable, InvalidNotification
from tests.alipay_world import APP_ID, SELLER_ID, Sim, gateway, new_key, notify_url, simulator
from tests.services import LOOPBACK, free_port

PRECREATE, REFUND = "alipay.trade.precreate", "alipay.trade.refund"


@pytest.fixture(scope="module")
def merchant() -> rsa.RSAPrivateKey:
    return new_key()


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory, merchant: rsa.RSAPrivateKey) -> Iterator[Sim]:
    with simulator(tmp_path_factory.mktemp("alipay"), merchant) as running:
        yield running


@pytest.fixture
async def alipay(sim: Sim, merchant: rsa.RSAPrivateKey) -> AsyncIterator[AlipayGateway]:
    async with gateway(sim, merchant) as adapter:
        yield adapter


def _number() -> str:
    return f"P{uuid.uuid4().hex[:20]}"


async def _scan(qr: str) -> httpx.Response:
    """Opens the QR code's page, as a buyer's phone would."""
    async with httpx.AsyncClient(timeout=10) as phone:
        return await phone.get(qr)


async def _paid(alipay: AlipayGateway, sim: Sim, amount: int = 1234) -> str:
    number = _number()
    await alipay.precreate(number, amount, "一篇付费文章", 30)
    await sim.pay(number)
    return number


async def test_precreate_answers_the_pay_page_and_the_same_qr_again(
    alipay: AlipayGateway, sim: Sim
) -> None:
    number = _number()
    before = (await sim.calls()).get(PRECREATE, 0)
    qr = await alipay.precreate(number, 990, "课", 30)
    assert qr.startswith(f"{sim.url}/qr/")
    assert await alipay.precreate(number, 990, "课", 30) == qr
    assert (await sim.calls())[PRECREATE] == before + 2
    assert (await sim.trade(number))["amount_cents"] == 990
    page = await _scan(qr)
    assert "¥9.90" in page.text
    assert 'data-status="WAIT_BUYER_PAY"' in page.text


async def test_the_same_number_for_another_amount_is_refused(alipay: AlipayGateway) -> None:
    number = _number()
    await alipay.precreate(number, 100, "课", 30)
    with pytest.raises(GatewayRefused) as refused:
        await alipay.precreate(number, 101, "课", 30)
    assert refused.value.sub_code == "ACQ.CONTEXT_INCONSISTENT"


async def test_query_knows_a_trade_from_its_scan_and_reports_its_payment(
    alipay: AlipayGateway, sim: Sim
) -> None:
    number = _number()
    qr = await alipay.precreate(number, 1234, "课", 30)
    assert await alipay.query(number) is None  # precreated, never scanned: no trade yet
    await _scan(qr)
    waiting = await alipay.query(number)
    assert waiting is not None
    assert (waiting.status, waiting.amount_cents, waiting.paid_at) == ("WAIT_BUYER_PAY", 1234, None)
    [trade_no] = await sim.pay(number)
    paid = await alipay.query(number)
    assert paid is not None
    assert (paid.status, paid.trade_no, paid.amount_cents) == ("TRADE_SUCCESS", trade_no, 1234)
    assert paid.buyer_id is not None
    assert paid.buyer_id.startswith("2088")
    assert paid.paid_at is not None
    assert paid.paid_at.tzinfo is not None


async def test_close_closes_a_waiting_trade_knows_no_unscanned_one_and_refuses_a_paid_one(
    alipay: AlipayGateway, sim: Sim
) -> None:
    unscanned, waiting = _number(), _number()
    await alipay.precreate(unscanned, 100, "课", 30)
    assert await alipay.close(unscanned) is False
    await _scan(await alipay.precreate(waiting, 100, "课", 30))
    assert await alipay.close(waiting) is True
    closed = await alipay.query(waiting)
    assert closed is not None
    assert closed.status == "TRADE_CLOSED"
    late = await sim.post(f"/_sim/trades/{waiting}/pay", {})
    assert late.status_code == 409  # no longer payable
    with pytest.raises(GatewayRefused) as refused:
        await alipay.close(await _paid(alipay, sim))
    assert refused.value.sub_code == "ACQ.TRADE_STATUS_ERROR"


async def test_hundreds_of_refunds_with_one_request_number_refund_once(
    alipay: AlipayGateway, sim: Sim
) -> None:
    number = await _paid(alipay, sim)
    refunds = await asyncio.gather(
        *(alipay.refund(number, 1234, f"{number}-R1", reason="重复支付") for _ in range(200))
    )
    assert sum(r.fund_change for r in refunds) == 1
    assert {(r.refunded_cents, r.out_request_no) for r in refunds} == {(1234, f"{number}-R1")}
    assert [r["amount_cents"] for r in await sim.refunds() if r["out_trade_no"] == number] == [1234]
    trade = await alipay.query(number)
    assert trade is not None
    assert trade.status == "TRADE_CLOSED"  # refunded in full


async def test_a_refund_whose_answer_was_lost_is_retried_without_refunding_twice(
    alipay: AlipayGateway, sim: Sim
) -> None:
    number = await _paid(alipay, sim)
    await sim.fail(REFUND, "lost_answer")
    with pytest.raises(GatewayUnavailable):
        await alipay.refund(number, 1234, f"{number}-R1")
    again = await alipay.refund(number, 1234, f"{number}-R1")
    assert (again.fund_change, again.refunded_cents) == (False, 1234)
    assert len([r for r in await sim.refunds() if r["out_trade_no"] == number]) == 1


async def test_a_refund_beyond_the_payment_or_of_an_unpaid_trade_is_refused(
    alipay: AlipayGateway, sim: Sim
) -> None:
    number = await _paid(alipay, sim, amount=500)
    partial = await alipay.refund(number, 200, f"{number}-R1")
    assert (partial.refunded_cents, partial.fund_change) == (200, True)
    with pytest.raises(GatewayRefused) as refused:
        await alipay.refund(number, 301, f"{number}-R2")
    assert refused.value.sub_code == "ACQ.REFUND_AMT_NOT_EQUAL_TOTAL"
    with pytest.raises(GatewayRefused) as unknown:
        await alipay.refund(_number(), 100, "R1")
    assert unknown.value.sub_code == "ACQ.TRADE_NOT_EXIST"


async def test_a_duplicate_payment_is_refunded_by_its_own_trade_number(
    alipay: AlipayGateway, sim: Sim
) -> None:
    number = _number()
    await alipay.precreate(number, 800, "课", 30)
    first, second = await sim.pay(number, times=2)
    refund = await alipay.refund(number, 800, f"{number}-{second}", trade_no=second)
    assert (refund.trade_no, refund.refunded_cents) == (second, 800)
    trade = await alipay.query(number)
    assert trade is not None
    assert (trade.trade_no, trade.status) == (first, "TRADE_SUCCESS")  # the first stays paid


@pytest.mark.parametrize(
    "fault", ["unavailable", "system_error", "http_500", "bad_signature", "unsigned", "lost_answer"]
)
async def test_a_gateway_fault_or_an_answer_that_does_not_verify_may_be_retried(
    alipay: AlipayGateway, sim: Sim, fault: str
) -> None:
    number = _number()
    await sim.fail(PRECREATE, fault)
    with pytest.raises(GatewayUnavailable) as failed:
        await alipay.precreate(number, 100, "课", 30)
    if fault == "bad_signature":
        assert "signature does not verify" in failed.value.message
    assert (await alipay.precreate(number, 100, "课", 30)).startswith(sim.url)


async def test_only_an_authentication_error_is_believed_unsigned(
    alipay: AlipayGateway, sim: Sim
) -> None:
    await sim.fail("alipay.trade.query", "unsigned")
    with pytest.raises(GatewayUnavailable, match="unsigned"):  # not "no such trade"
        await alipay.query(_number())
    assert await alipay.query(_number()) is None  # signed, it is believed
    async with gateway(sim, new_key()) as impostor:
        await sim.fail(PRECREATE, "unsigned")
        with pytest.raises(GatewayRefused) as refused:
            await impostor.precreate(_number(), 100, "课", 30)
    assert refused.value.sub_code == "isv.invalid-signature"


async def test_the_gateway_refuses_requests_not_signed_by_the_app(
    sim: Sim, merchant: rsa.RSAPrivateKey
) -> None:
    async with gateway(sim, new_key()) as impostor:
        with pytest.raises(GatewayRefused) as refused:
            await impostor.precreate(_number(), 100, "课", 30)
    assert (refused.value.gateway_code, refused.value.sub_code) == (
        "40002",
        "isv.invalid-signature",
    )
    other_app = Merchant("2021999999999999", SELLER_ID, merchant, public_key(sim.public_key))
    async with httpx.AsyncClient(timeout=10) as client:
        stranger = AlipayGateway(other_app, sim.gateway_url, client, SystemClock())
        with pytest.raises(GatewayRefused) as refused:
            await stranger.query(_number())
    assert refused.value.sub_code == "isv.invalid-app-id"


async def test_answers_signed_by_another_key_than_alipays_are_refused(
    sim: Sim, merchant: rsa.RSAPrivateKey
) -> None:
    trusting_another = Merchant(APP_ID, SELLER_ID, merchant, new_key().public_key())
    async with httpx.AsyncClient(timeout=10) as client:
        adapter = AlipayGateway(trusting_another, sim.gateway_url, client, SystemClock())
        with pytest.raises(GatewayUnavailable, match="does not verify"):
            await adapter.precreate(_number(), 100, "课", 30)


async def test_notifications_are_retried_until_the_reply_is_exactly_success(
    sim: Sim, merchant: rsa.RSAPrivateKey
) -> None:
    async with (
        notify_url(["failure", "Success", "success\n"]) as sink,
        gateway(sim, merchant, sink.url) as alipay,
    ):
        number = _number()
        await alipay.precreate(number, 1234, "课", 30)
        [trade_no] = await sim.pay(number)
        for _ in range(200):  # the scaled schedule: about a second for four attempts
            if len(sink.forms) >= 4:
                break
            await asyncio.sleep(0.05)
    attempts = [a for a in await sim.notifications() if a["out_trade_no"] == number]
    assert [a["reply"] for a in attempts] == ["failure", "Success", "success\n", "success"]
    assert len({a["notify_id"] for a in attempts}) == 1
    assert len(sink.forms) == 4
    notification = alipay.verify_notification(sink.forms[0])
    assert (notification.out_trade_no, notification.trade_no) == (number, trade_no)
    assert (notification.amount_cents, notification.status) == (1234, "TRADE_SUCCESS")


async def test_a_notify_url_that_does_not_answer_is_tried_again(
    sim: Sim, merchant: rsa.RSAPrivateKey
) -> None:
    nobody = f"http://{LOOPBACK}:{free_port()}/notify"  # nothing listens there
    async with gateway(sim, merchant, nobody) as alipay:
        number = _number()
        await alipay.precreate(number, 100, "课", 30)
        await sim.pay(number)
        for _ in range(200):  # at once, then after 0.24 s at this scale
            attempts = [a for a in await sim.notifications() if a["out_trade_no"] == number]
            if len(attempts) >= 2:
                break
            await asyncio.sleep(0.05)
    assert [a["attempt"] for a in attempts[:2]] == [1, 2]
    assert all(a["status"] is None and "ConnectError" in a["reply"] for a in attempts)


async def test_a_notification_of_the_simulator_tampered_is_refused_naming_what_failed(
    sim: Sim, merchant: rsa.RSAPrivateKey
) -> None:
    async with notify_url() as sink, gateway(sim, merchant, sink.url) as alipay:
        number = _number()
        await alipay.precreate(number, 1234, "课", 30)
        await sim.pay(number)
        for _ in range(100):
            if sink.forms:
                break
            await asyncio.sleep(0.05)
    form = sink.forms[0]
    assert alipay.verify_notification(form).out_trade_no == number
    # The simulator's own key signs tampered copies, to reach each check past the signature.
    sim_key = private_key(sim.key_file.read_text())
    for field, value in [
        ("app_id", "2021999999999999"),
        ("seller_id", "2088999999999999"),
        ("trade_status", "WAIT_BUYER_PAY"),
        ("total_amount", "12.3.4"),
    ]:
        tampered = {**form, field: value}
        with pytest.raises(InvalidNotification) as unsigned_change:
            alipay.verify_notification(tampered)
        assert unsigned_change.value.failed == "sign"
        tampered["sign"] = sign(sim_key, signing_string(tampered, NOTIFICATION_UNSIGNED))
        with pytest.raises(InvalidNotification) as refused:
            alipay.verify_notification(tampered)
        assert refused.value.failed == field
    with pytest.raises(InvalidNotification) as unsigned:
        alipay.verify_notification({k: v for k, v in form.items() if k != "sign"})
    assert unsigned.value.failed == "sign"


async def test_the_pay_page_pays_with_one_button_and_twice_with_the_other(
    alipay: AlipayGateway, sim: Sim
) -> None:
    once, twice = _number(), _number()
    async with httpx.AsyncClient(timeout=10, follow_redirects=True) as browser:

        async def press(page: httpx.Response, button: str) -> httpx.Response:
            """Submits the form holding the button, as a browser would."""
            form = re.search(
                rf'<form method="post" action="([^"]+)">((?:(?!</form>).)*id="{button}")', page.text
            )
            assert form is not None, page.text
            times = re.search(r'name="times" value="(\d)"', form[2])
            assert times is not None
            return await browser.post(page.url.join(form[1]), data={"times": times[1]})

        page = await browser.get(await alipay.precreate(once, 300, "<b>课</b>", 30))
        assert "&lt;b&gt;课&lt;/b&gt;" in page.text  # the subject escaped
        paid = await press(page, "pay")
        assert 'data-status="TRADE_SUCCESS"' in paid.text
        assert 'id="pay"' not in paid.text  # nothing left to pay
        assert (await browser.post(f"{page.url}/pay", data={"times": "1"})).status_code == 200
        page = await browser.get(await alipay.precreate(twice, 300, "课", 30))
        await press(page, "pay-twice")
        listed = await browser.get(f"{sim.url}/")  # every trade, linking to its pay page
        assert f'href="{page.url.path}">{twice}</a>' in listed.text
    assert len((await sim.trade(once))["payments"]) == 1
    payments = (await sim.trade(twice))["payments"]
    assert len({p["trade_no"] for p in payments}) == 2


async def test_the_simulator_keeps_its_key_and_publishes_it(
    sim: Sim, merchant: rsa.RSAPrivateKey
) -> None:
    folder = sim.key_file.parent
    assert (folder / "sim.pub").read_text() == sim.public_key
    signer = private_key(sim.key_file.read_text())
    assert signer.public_key().public_numbers() == public_key(sim.public_key).public_numbers()
    assert sim.key_file.stat().st_mode & 0o077 == 0  # the private key readable by its owner only
    with simulator(folder, merchant) as restarted:
        assert restarted.public_key == sim.public_key
