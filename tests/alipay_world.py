"""The Alipay simulator as a process under test, a merchant's throwaway keys, the adapter
pointed at it, and a notify URL that records what it is sent."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from raffle.adapters.alipay.gateway import AlipayGateway, Merchant
from raffle.adapters.alipay.signing import public_key
from raffle.adapters.clock import SystemClock
from tests.services import LOOPBACK, free_port

SIM = Path(sys.executable).parent / "raffle-alipay-sim"
APP_ID = "2021000000000001"
SELLER_ID = "2088000000000001"


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem(key: rsa.RSAPrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@dataclass
class Sim:
    """A running simulator: its address, its public key (PEM) and its test hooks."""

    url: str
    public_key: str
    key_file: Path  # the simulator's private key, to sign what Alipay would
    process: subprocess.Popen[bytes]

    @property
    def gateway_url(self) -> str:
        return f"{self.url}/gateway.do"

    async def get(self, path: str) -> Any:
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.get(f"{self.url}{path}")
        response.raise_for_status()
        return response.json()

    async def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        async with httpx.AsyncClient(timeout=10) as client:
            return await client.post(f"{self.url}{path}", json=body)

    async def calls(self) -> dict[str, int]:
        """Calls received per method of the open API."""
        return dict(await self.get("/_sim/calls"))

    async def trade(self, out_trade_no: str) -> dict[str, Any]:
        return dict(await self.get(f"/_sim/trades/{out_trade_no}"))

    async def pay(self, out_trade_no: str, *, times: int = 1, late: bool = False) -> list[str]:
        """Pays as a buyer (2: a duplicate payment; late: a closed trade); the trade numbers."""
        response = await self.post(
            f"/_sim/trades/{out_trade_no}/pay", {"times": times, "late": late}
        )
        response.raise_for_status()
        return list(response.json()["trade_nos"])

    async def fail(self, method: str, fault: str, times: int = 1) -> None:
        """The method's next `times` calls fail so (alipay_sim.openapi.FAULTS)."""
        response = await self.post(
            "/_sim/faults", {"method": method, "fault": fault, "times": times}
        )
        response.raise_for_status()

    async def refunds(self) -> list[dict[str, Any]]:
        return list(await self.get("/_sim/refunds"))

    async def notifications(self) -> list[dict[str, Any]]:
        """Every attempt at a notification: its form, the reply, the attempt's number."""
        return list(await self.get("/_sim/notifications"))


@contextlib.contextmanager
def simulator(
    folder: Path, merchant: rsa.RSAPrivateKey, *, notify_scale: float = 0.001
) -> Iterator[Sim]:
    """`raffle-alipay-sim` on a free loopback port, for the merchant's key."""
    (merchant_pem := folder / "merchant.pub").write_text(pem(merchant))
    port = free_port()
    url = f"http://{LOOPBACK}:{port}"
    command = [
        str(SIM), "--host", LOOPBACK, "--port", str(port), "--app-id", APP_ID,
        "--seller-id", SELLER_ID, "--merchant-public-key", str(merchant_pem),
        "--key", str(folder / "sim.key"), "--public-key-out", str(folder / "sim.pub"),
        "--notify-scale", str(notify_scale),
    ]  # fmt: skip
    log = (folder / "sim.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield Sim(url, _wait_for_key(url, process), folder / "sim.key", process)
    finally:
        process.terminate()
        process.wait(10)
        log.close()


def _wait_for_key(url: str, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + 30
    while True:
        with contextlib.suppress(httpx.TransportError):
            if (response := httpx.get(f"{url}/_sim/public-key", timeout=1)).status_code == 200:
                return response.text
        assert process.poll() is None, "raffle-alipay-sim exited"
        assert time.monotonic() < deadline, "raffle-alipay-sim did not answer within 30 s"
        time.sleep(0.1)


@contextlib.asynccontextmanager
async def gateway(
    sim: Sim, merchant: rsa.RSAPrivateKey, notify_url: str | None = None
) -> AsyncIterator[AlipayGateway]:
    """The adapter, as bootstrap makes it, pointed at the simulator."""
    account = Merchant(APP_ID, SELLER_ID, merchant, public_key(sim.public_key), notify_url)
    async with httpx.AsyncClient(timeout=10) as client:
        yield AlipayGateway(account, sim.gateway_url, client, SystemClock())


@dataclass
class NotifyUrl:
    """A notify URL served in this process: it keeps every form posted to it and replies
    `replies` in turn (then `success`)."""

    url: str
    forms: list[dict[str, str]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)


@contextlib.asynccontextmanager
async def notify_url(replies: list[str] | None = None) -> AsyncIterator[NotifyUrl]:
    port = free_port()
    sink = NotifyUrl(f"http://{LOOPBACK}:{port}/notify", replies=list(replies or []))

    async def notify(request: Request) -> Response:
        sink.forms.append(dict(parse_qsl((await request.body()).decode(), keep_blank_values=True)))
        sink.arrived.set()
        return PlainTextResponse(sink.replies.pop(0) if sink.replies else "success")

    app = Starlette(routes=[Route("/notify", notify, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, host=LOOPBACK, port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, no event
        await asyncio.sleep(0.01)
    try:
        yield sink
    finally:
        server.should_exit = True
        await task
