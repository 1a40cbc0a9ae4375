"""The demo's payments: the Alipay simulator started beside the service, with a merchant key
pair of the demo's own, and a piece of content on sale to buy with it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from raffle.domain.content import ContentState, ContentText
from raffle.service import content
from raffle.service.ports import Clock, UnitOfWork

APP_ID = "2021000000000001"  # the simulator's, not an app at Alipay
SELLER_ID = "2088000000000001"
SIM = Path(sys.executable).parent / "raffle-alipay-sim"
CONTENT = "course-1"  # what the demo campaign's content prize names too
TEXT = ContentText(
    "付费课程一门 · A paid course",
    "How exact odds are published",
    "## 第一课 Lesson one\n\nEvery prize's odds are **exact** and published.",
    "What a *strategy* is made of, and why its odds add up to one.",
    None,
    990,
)


def start_simulator(folder: Path, service: str) -> tuple[subprocess.Popen[bytes], str]:
    """The simulator on a free port, notifying `service`'s notify route; the service's
    RAFFLE_ALIPAY_* variables are set for it. The process, and the simulator's address."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (private := folder / "merchant.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    (public := folder / "merchant.pub").write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    sim_public = folder / "sim.pub"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        str(SIM), "--port", str(port), "--app-id", APP_ID, "--seller-id", SELLER_ID,
        "--merchant-public-key", str(public), "--key", str(folder / "sim.key"),
        "--public-key-out", str(sim_public),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603 - our own executable and arguments
    deadline = time.monotonic() + 20
    while not sim_public.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.terminate()
            raise RuntimeError("raffle-alipay-sim did not start")
        time.sleep(0.05)
    os.environ.update(
        RAFFLE_ALIPAY_APP_ID=APP_ID,
        RAFFLE_ALIPAY_SELLER_ID=SELLER_ID,
        RAFFLE_ALIPAY_GATEWAY_URL=f"{url}/gateway.do",
        RAFFLE_ALIPAY_NOTIFY_URL=f"{service}/api/payments/alipay/notify",
        RAFFLE_ALIPAY_APP_PRIVATE_KEY_FILE=str(private),
        RAFFLE_ALIPAY_PUBLIC_KEY_FILE=str(sim_public),
    )
    return process, url


async def put_on_sale(uow: Callable[[], UnitOfWork], clock: Clock) -> None:
    """CONTENT on sale, unless it exists (a campaign file declared it)."""
    async with uow() as reader:
        if await reader.content.get(CONTENT) is not None:
            return
    await content.create(CONTENT, TEXT, uow=uow, clock=clock)
    await content.move(CONTENT, ContentState.ON_SALE, uow=uow, clock=clock)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
