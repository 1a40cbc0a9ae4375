"""Payment notifications verified and recorded per second on PostgreSQL (1 x 4 shards): the
notify route's work (RSA2 verification, the order and amount checked, the payment and its
outbox message written in one transaction) for N notifications of N open orders, C at once;
beside it, in the same run, the verification alone, so the ratio says what the database adds.

    .venv/bin/python bench/notifications.py [--orders 2000] [--concurrency 8]

A throwaway PostgreSQL (tests/services.py, fsync off) is started and removed. The forms are
signed as the simulator signs them (alipay_sim's notifier), with a key of the run's own.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
# Python puts this file's folder first on sys.path, where bench/http.py would shadow the
# standard library's `http` (which httpx, under the Alipay adapter, imports).
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != BENCH]

from alipay_sim.signing import sign, signing_string  # noqa: E402
from raffle.adapters.sql.migrate import upgrade  # noqa: E402
from raffle.bootstrap import bootstrap  # noqa: E402
from raffle.domain.content import ContentState, ContentText  # noqa: E402
from raffle.domain.payments import Cause, OrderState, PaymentOrder  # noqa: E402
from raffle.service import content  # noqa: E402
from raffle.service import payments as use  # noqa: E402
from raffle.service.payment_notices import receive  # noqa: E402
from raffle.settings import Settings  # noqa: E402
from tests.services import PostgresServer  # noqa: E402

APP_ID, SELLER_ID, PRICE = "2021000000000001", "2088000000000001", 990
BEIJING = timedelta(hours=8)


def _pem(key: rsa.RSAPrivateKey) -> tuple[str, str]:
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


def _form(order: PaymentOrder, gateway: rsa.RSAPrivateKey) -> dict[str, str]:
    now = (datetime.now(UTC) + BEIJING).strftime("%Y-%m-%d %H:%M:%S")
    form = {
        "notify_time": now, "notify_type": "trade_status_sync", "notify_id": secrets.token_hex(16),
        "app_id": APP_ID, "charset": "utf-8", "version": "1.0", "sign_type": "RSA2",
        "trade_no": f"2026{secrets.randbelow(10**24):024d}", "out_trade_no": order.out_trade_no,
        "buyer_id": "2088102177846880", "seller_id": SELLER_ID, "trade_status": "TRADE_SUCCESS",
        "total_amount": "9.90", "receipt_amount": "9.90", "subject": order.subject,
        "gmt_create": now, "gmt_payment": now,
    }  # fmt: skip
    form["sign"] = sign(gateway, signing_string(form, ("sign", "sign_type")))
    return form


async def run(url: str, orders: int, concurrency: int) -> None:
    await upgrade(url, shard_tables=4)
    merchant, gateway = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in "ab"
    )
    settings = Settings(
        database_url=url, shard_tables=4, alipay_app_id=APP_ID, alipay_seller_id=SELLER_ID,
        alipay_app_private_key=_pem(merchant)[0], alipay_public_key=_pem(gateway)[1],
        alipay_gateway_url="https://gateway.invalid/gateway.do",
    )  # fmt: skip
    raffle = bootstrap(settings)
    try:
        ctx = raffle.payments()
        text = ContentText("A course", "", "body", "", None, PRICE)
        await content.create("course-1", text, uow=raffle.uow, clock=raffle.clock)
        await content.move("course-1", ContentState.ON_SALE, uow=raffle.uow, clock=raffle.clock)
        made = [await use.order(f"u{n:05d}", "course-1", ctx) for n in range(orders)]
        for order in made:  # shown: precreated at the gateway (not called here)
            async with raffle.shards.for_user(order.user_id) as uow:
                now = raffle.clock.now()
                await uow.payments.move(
                    order.out_trade_no, OrderState.CREATED, OrderState.PAYING, Cause.PRECREATED, now
                )
                await uow.commit()
        forms = [_form(order, gateway) for order in made]
        assert raffle.gateway is not None
        verify = raffle.gateway.verify_notification
        started = time.perf_counter()
        for form in forms:
            verify(form)
        verified = orders / (time.perf_counter() - started)

        queue = list(forms)

        async def notifier() -> int:
            done = 0
            while queue:
                assert await receive(queue.pop(), ctx)
                done += 1
            return done

        started = time.perf_counter()
        recorded = sum(await asyncio.gather(*(notifier() for _ in range(concurrency))))
        rate = recorded / (time.perf_counter() - started)
        at_once = f"{recorded}, {concurrency} at once"
        print(f"notifications verified and recorded: {rate:,.0f}/s ({at_once})")
        print(f"verified alone, same run:            {verified:,.0f}/s")
        print(f"recorded / verified alone:           {rate / verified:.2f}")
    finally:
        await raffle.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--orders", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    server = PostgresServer()
    server.start()
    try:
        asyncio.run(run(server.url, args.orders, args.concurrency))
    finally:
        server.close()


if __name__ == "__main__":
    main()
