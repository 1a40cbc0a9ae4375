"""A raffle wired to the Alipay simulator for payment tests: content on sale, orders shown,
paid at the simulator, and its notifications caught to be sent to the API by the test."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import quote

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from raffle.bootstrap import Raffle
from raffle.domain.content import ContentState, ContentText
from raffle.domain.payments import PaymentOrder
from raffle.entrypoints import worker
from raffle.entrypoints.http.app import create_app
from raffle.service import content
from raffle.service import payments as use
from raffle.service.payments import Payments
from raffle.settings import Settings
from tests.alipay_world import APP_ID, SELLER_ID, NotifyUrl, Sim
from tests.integration.raffles import SettableClock, campaign, wired

CONTENT, PRICE = "course-1", 990
NOTIFY = "/api/payments/alipay/notify"


def alipay_settings(sim: Sim, merchant: rsa.RSAPrivateKey, sink: NotifyUrl) -> dict[str, object]:
    """The service's settings that point it at the simulator, notified at `sink`."""
    private = merchant.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return {
        "alipay_app_id": APP_ID,
        "alipay_seller_id": SELLER_ID,
        "alipay_gateway_url": sim.gateway_url,
        "alipay_notify_url": sink.url,
        "alipay_app_private_key": private,
        "alipay_public_key": sim.public_key,
    }


@dataclass
class Shop:
    """A raffle selling CONTENT, its API in process, the simulator and the notify sink."""

    raffle: Raffle
    sim: Sim
    sink: NotifyUrl
    api: httpx.AsyncClient

    @property
    def ctx(self) -> Payments:
        return self.raffle.payments()

    async def ordered(self, user_id: str) -> PaymentOrder:
        return await use.order(user_id, CONTENT, self.ctx)

    async def shown(self, user_id: str) -> PaymentOrder:
        """An order whose QR was shown (precreated at the simulator)."""
        made = await self.ordered(user_id)
        await use.qr_code(user_id, made.out_trade_no, self.ctx)
        return made

    async def paid(
        self, order: PaymentOrder, *, times: int = 1, late: bool = False
    ) -> list[dict[str, str]]:
        """Pay at the simulator; the notification forms it sent (one per payment)."""
        before = len(self.sink.forms)
        await self.sim.pay(order.out_trade_no, times=times, late=late)
        await until(lambda: len(self.sink.forms) >= before + times)
        return self.sink.forms[before : before + times]

    async def notify(self, form: dict[str, str]) -> str:
        response = await self.api.post(
            NOTIFY, content="&".join(f"{k}={_quote(v)}" for k, v in form.items()),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )  # fmt: skip
        return response.text

    async def order_now(self, order: PaymentOrder) -> PaymentOrder:
        return await use.mine(order.user_id, order.out_trade_no, self.ctx)

    async def counts(self, order: PaymentOrder) -> tuple[int, int]:
        """The order's notified payments, and the messages its shard's outbox holds (no
        draws here: each is a `payment.notified`)."""
        uow = self.ctx.shard(order.out_trade_no)
        assert uow is not None
        async with uow:
            payments = await uow.payments.payments_of(order.out_trade_no)
            messages = await uow.outbox.states()
        return len(payments), sum(messages.values())


def _quote(value: str) -> str:
    return quote(value, safe="")


async def until(check: Callable[[], bool], within: float = 20.0) -> None:
    waited = 0.0
    while not check():
        assert waited < within, "not reached in time"
        await asyncio.sleep(0.05)
        waited += 0.05


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 20.0) -> None:
    """Awaits `check()` (a coroutine function) until it answers true."""
    waited = 0.0
    while not await check():
        assert waited < within, "not reached in time"
        await asyncio.sleep(0.05)
        waited += 0.05


async def shop(
    settings: Settings,
    sim: Sim,
    sink: NotifyUrl,
    clock: SettableClock | None = None,
    *,
    sell: bool = True,
) -> Shop:
    """The raffle on `settings`; `sell`: putting CONTENT on sale (a process started again
    over the same databases finds it there)."""
    raffle = await wired(settings, campaign(), clock)
    if sell:
        text = ContentText("Knowledge 101", "a course", "# the body", "the preview", None, PRICE)
        await content.create(CONTENT, text, uow=raffle.uow, clock=raffle.clock)
        await content.move(CONTENT, ContentState.ON_SALE, uow=raffle.uow, clock=raffle.clock)
    app = create_app(raffle, scheduler=False)
    api = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://raffle")
    return Shop(raffle, sim, sink, api)


@contextlib.asynccontextmanager
async def working(raffle: Raffle, **run: object) -> AsyncIterator[asyncio.Task[None]]:
    """The worker's parts in this process (relay, consumers, jobs)."""
    task = asyncio.create_task(worker.run(raffle, **run))  # type: ignore[arg-type]
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, BaseExceptionGroup, BaseException):
            await task
