"""Hooks for tests over HTTP: pay, list trades, refunds, notifications, calls; inject faults."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from alipay_sim.ledger import Ledger, Refusal
from alipay_sim.openapi import FAULTS
from alipay_sim.signing import public_pem
from alipay_sim.simulator import Simulator

_MOST_TIMES = 10


def routes(sim: Simulator) -> list[Route]:
    ledger, api, clock = sim.ledger, sim.api, sim.config.clock

    async def public_key(request: Request) -> Response:
        return PlainTextResponse(public_pem(sim.config.key))

    async def trades(request: Request) -> Response:
        return JSONResponse([t.view(clock()) for t in ledger.trades.values()])

    async def trade(request: Request) -> Response:
        found = ledger.trades.get(request.path_params["out_trade_no"])
        if found is None:
            return JSONResponse({"error": "no such trade"}, 404)
        return JSONResponse(found.view(clock()))

    async def pay(request: Request) -> Response:
        """Body {"times": 1|2, "late": false}: pays as a buyer would (scanning first)."""
        found = ledger.trades.get(request.path_params["out_trade_no"])
        if found is None:
            return JSONResponse({"error": "no such trade"}, 404)
        body = await _json(request)
        times = body.get("times", 1)
        if not isinstance(times, int) or not 1 <= times <= _MOST_TIMES:
            return JSONResponse({"error": f"times: 1 to {_MOST_TIMES}"}, 422)
        try:
            payments = sim.pay(found, times=times, late=body.get("late") is True)
        except Refusal as refusal:
            return JSONResponse({"error": refusal.sub_code, "message": refusal.sub_msg}, 409)
        return JSONResponse({"trade_nos": [p.trade_no for p in payments]})

    async def refunds(request: Request) -> Response:
        return JSONResponse(_refunds(ledger))

    async def calls(request: Request) -> Response:
        return JSONResponse(dict(api.calls))

    async def notifications(request: Request) -> Response:
        return JSONResponse(sim.notifier.attempts)

    async def faults(request: Request) -> Response:
        """Body {"method": "alipay.trade.refund", "fault": "unavailable", "times": 1}: the
        method's next calls fail so (lost_answer: done, but the answer never arrives)."""
        body = await _json(request)
        method, fault, times = body.get("method"), body.get("fault"), body.get("times", 1)
        if not isinstance(method, str) or fault not in FAULTS or not isinstance(times, int):
            return JSONResponse({"error": f"method, fault (one of {FAULTS}), times"}, 422)
        api.faults.setdefault(method, []).extend([fault] * times)
        return JSONResponse({"method": method, "pending": api.faults[method]})

    return [
        Route("/_sim/public-key", public_key),
        Route("/_sim/trades", trades),
        Route("/_sim/trades/{out_trade_no}", trade),
        Route("/_sim/trades/{out_trade_no}/pay", pay, methods=["POST"]),
        Route("/_sim/refunds", refunds),
        Route("/_sim/calls", calls),
        Route("/_sim/notifications", notifications),
        Route("/_sim/faults", faults, methods=["POST"]),
    ]


def _refunds(ledger: Ledger) -> list[dict[str, Any]]:
    return [
        {"out_trade_no": r.out_trade_no, "trade_no": r.trade_no,
         "out_request_no": r.out_request_no, "amount_cents": r.amount_cents}
        for t in ledger.trades.values()
        for r in t.refunds.values()
    ]  # fmt: skip


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
