"""The simulator as an ASGI app: the gateway, the pay pages and the test hooks."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from urllib.parse import parse_qsl

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from alipay_sim import hooks
from alipay_sim.ledger import Ledger, Refusal
from alipay_sim.notifier import Notifier
from alipay_sim.openapi import OpenApi
from alipay_sim.pages import pay_page, trades_page
from alipay_sim.simulator import Config, Simulator

_MOST_BODY = 64 * 1024  # a gateway request is a few hundred bytes


def create_app(config: Config) -> Starlette:
    """The simulator; its state lives as long as the app."""
    ledger = Ledger()
    base: list[str] = [config.public_url or ""]
    api = OpenApi(
        config.app_id, config.seller_id, config.merchant_key, config.key, ledger,
        qr_url=lambda code: f"{base[0].rstrip('/')}/qr/{code}",
    )  # fmt: skip
    client = httpx.AsyncClient(timeout=10)
    notifier = Notifier(
        config.app_id, config.seller_id, config.key, client, config.clock, config.notify_scale
    )
    sim = Simulator(config, ledger, api, notifier)

    async def gateway(request: Request) -> Response:
        if not config.public_url:
            base[0] = str(request.base_url)
        params = dict(request.query_params) | await _form(request)
        reply = api.handle(params, config.clock())
        return Response(reply.body, reply.status, media_type="application/json;charset=utf-8")

    async def index(request: Request) -> Response:
        now = config.clock()
        return HTMLResponse(trades_page([(t, t.status(now)) for t in ledger.trades.values()]))

    async def scan(request: Request) -> Response:
        trade = ledger.by_code.get(request.path_params["code"])
        if trade is None:
            return HTMLResponse("<h1>二维码无效 Unknown QR code</h1>", 404)
        now = config.clock()
        ledger.scan(trade, now)
        notice = {"paid": "已付款 Paid.", "twice": "已付款两次 Paid twice."}.get(
            request.query_params.get("done", ""), ""
        )
        return HTMLResponse(pay_page(trade, trade.status(now), notice))

    async def pay(request: Request) -> Response:
        code = request.path_params["code"]
        if (trade := ledger.by_code.get(code)) is None:
            return HTMLResponse("<h1>二维码无效 Unknown QR code</h1>", 404)
        twice = (await _form(request)).get("times") == "2"
        try:
            sim.pay(trade, times=2 if twice else 1)
        except Refusal as refusal:
            return HTMLResponse(pay_page(trade, trade.status(config.clock()), refusal.sub_msg))
        return RedirectResponse(f"/qr/{code}?done={'twice' if twice else 'paid'}", 303)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await notifier.aclose()
        await client.aclose()

    routes = [
        Route("/", index),
        Route("/gateway.do", gateway, methods=["GET", "POST"]),
        Route("/qr/{code}", scan),
        Route("/qr/{code}/pay", pay, methods=["POST"]),
        *hooks.routes(sim),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


async def _form(request: Request) -> dict[str, str]:
    """A form-encoded body (the gateway's requests, the pay buttons), UTF-8."""
    body = await request.body()
    if len(body) > _MOST_BODY:
        return {}
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
