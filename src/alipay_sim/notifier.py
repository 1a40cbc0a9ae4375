"""Asynchronous notifications: signed forms POSTed to the notify URL until it says `success`."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx
from cryptography.hazmat.primitives.asymmetric import rsa

from alipay_sim.fields import beijing, yuan
from alipay_sim.ledger import Payment, Trade
from alipay_sim.signing import sign, signing_string

# Alipay's schedule: at once, then after 4m, 10m, 10m, 1h, 2h, 6h and 15h (8 notifications
# in about 25 hours), in seconds; the simulator multiplies it by its scale.
SCHEDULE: tuple[float, ...] = (0, 240, 600, 600, 3600, 7200, 21600, 54000)


@dataclass
class Notifier:
    """Sends each payment's notification on the schedule and remembers every attempt."""

    app_id: str
    seller_id: str
    key: rsa.RSAPrivateKey
    client: httpx.AsyncClient
    clock: Callable[[], datetime]
    scale: float = 1.0
    schedule: Sequence[float] = SCHEDULE
    attempts: list[dict[str, Any]] = field(default_factory=list)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def form(self, trade: Trade, payment: Payment) -> dict[str, str]:
        """The notification of `payment`, signed (without sign and sign_type in the string)."""
        form = {
            "notify_time": beijing(self.clock()),
            "notify_type": "trade_status_sync",
            "notify_id": secrets.token_hex(16),
            "app_id": self.app_id,
            "charset": "utf-8",
            "version": "1.0",
            "sign_type": "RSA2",
            "trade_no": payment.trade_no,
            "out_trade_no": trade.out_trade_no,
            "buyer_id": payment.buyer_id,
            "buyer_logon_id": payment.buyer_logon_id,
            "seller_id": self.seller_id,
            "trade_status": "TRADE_SUCCESS",
            "total_amount": yuan(trade.amount_cents),
            "receipt_amount": yuan(trade.amount_cents),
            "buyer_pay_amount": yuan(trade.amount_cents),
            "invoice_amount": yuan(trade.amount_cents),
            "subject": trade.subject,
            "gmt_create": beijing(trade.created_at),
            "gmt_payment": beijing(payment.paid_at),
        }
        form["sign"] = sign(self.key, signing_string(form, ("sign", "sign_type")))
        return form

    def notify(self, trade: Trade, payment: Payment) -> None:
        if trade.notify_url is None:
            return
        task = asyncio.create_task(self._send(trade.notify_url, self.form(trade, payment)))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _send(self, url: str, form: dict[str, str]) -> None:
        for number, wait in enumerate(self.schedule, 1):
            await asyncio.sleep(wait * self.scale)
            attempt: dict[str, Any] = {
                "out_trade_no": form["out_trade_no"],
                "trade_no": form["trade_no"],
                "notify_id": form["notify_id"],
                "attempt": number,
                "form": form,
            }
            try:
                response = await self.client.post(url, data=form)
                attempt |= {"status": response.status_code, "reply": response.text[:200]}
            except httpx.HTTPError as error:
                attempt |= {"status": None, "reply": f"{type(error).__name__}: {error}"}
            self.attempts.append(attempt)
            if attempt["reply"] == "success":
                return

    async def aclose(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
