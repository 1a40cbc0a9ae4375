"""The simulator's parts for one merchant app, and paying, which the page and hooks share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from cryptography.hazmat.primitives.asymmetric import rsa

from alipay_sim.ledger import Ledger, Payment, Trade
from alipay_sim.notifier import Notifier
from alipay_sim.openapi import OpenApi


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Config:
    """One merchant app: its ids and public key; the simulator's own key; how fast
    notifications are retried (1: Alipay's schedule; 0.001: its 25 hours in 90 s)."""

    app_id: str
    seller_id: str
    merchant_key: rsa.RSAPublicKey
    key: rsa.RSAPrivateKey
    notify_scale: float = 1.0
    public_url: str | None = None  # where buyers reach the pay pages; else the request's URL
    clock: Callable[[], datetime] = _utc_now


@dataclass
class Simulator:
    config: Config
    ledger: Ledger
    api: OpenApi
    notifier: Notifier

    def pay(self, trade: Trade, *, times: int = 1, late: bool = False) -> list[Payment]:
        """The buyer pays `times` times (2: a duplicate payment under a second trade number),
        each payment notified; `late` pays a closed trade too."""
        now = self.config.clock()
        payments = [self.ledger.pay(trade, now, late=late or n > 0) for n in range(times)]
        for payment in payments:
            self.notifier.notify(trade, payment)
        return payments
