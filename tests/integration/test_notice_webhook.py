"""Operators' notices through the outbox relay to a real webhook: signed, checked by the
receiver, and delivered after the receiver was down for a minute (the relay's backoff, on an
injected clock)."""

from __future__ import annotations

import base64
import secrets
from datetime import timedelta
from pathlib import Path

from raffle.bootstrap import Raffle
from raffle.service.draw import Draw, draw
from raffle.service.relay import relay
from raffle.settings import Settings
from tests.integration.notices import notices
from tests.integration.raffles import ACTIVITY, SettableClock, campaign, wired
from tests.integration.webhook_receiver import Receiver
from tests.services import LOOPBACK, free_port


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


async def _crossing(tmp_path: Path, port: int, secret: str, clock: SettableClock) -> Raffle:
    """An embedded raffle whose notices go to the webhook on `port`, after two draws that
    leave 1 unit of a prize warned at 1."""
    settings = Settings(
        database_url=f"sqlite:///{tmp_path}/raffle.db",
        notice_webhook_url=f"http://{LOOPBACK}:{port}/raffle-notices",
        notice_webhook_secret=secret,
        publish_timeout_seconds=0.2,  # the wins' messages: nobody consumes them here
        republish_after_seconds=3600.0,
    )
    raffle = await wired(settings, campaign(rate="1", stock=3, warning=1, now=clock.current), clock)
    for n in range(2):
        await draw(
            Draw(f"user{n}", ACTIVITY), catalogue=raffle.catalogue, shards=raffle.shards,
            stock=raffle.stock, rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
        )  # fmt: skip
    return raffle


async def test_a_notice_reaches_a_webhook_that_was_down_for_a_minute(tmp_path: Path) -> None:
    port, secret, clock = free_port(), new_secret(), SettableClock()
    raffle = await _crossing(tmp_path, port, secret, clock)
    receiver = None
    try:
        [written] = await notices(raffle)
        assert (written["kind"], written["left"], written["state"]) == (
            "stock_warning",
            1,
            "create",
        )

        down_since = clock.current
        while clock.current - down_since < timedelta(minutes=1):  # nothing listens on `port`
            await relay(raffle.shards, raffle.broker, raffle.clock)
            clock.current += timedelta(seconds=2)
        [failing] = await notices(raffle)
        assert failing["state"] == "failed"

        receiver = Receiver(port, secret)
        clock.current += timedelta(minutes=1)  # the longest backoff
        await relay(raffle.shards, raffle.broker, raffle.clock)

        assert receiver.refused == 0
        assert [(n["kind"], n["left"], n["order_id"]) for n in receiver.accepted] == [
            ("stock_warning", 1, written["order_id"])
        ]
        assert receiver.timestamps == [int(clock.current.timestamp())]  # when it was sent
        [sent] = await notices(raffle)
        assert sent["state"] == "published"
        await relay(raffle.shards, raffle.broker, raffle.clock)
        assert len(receiver.accepted) == 1  # once published, never sent again
    finally:
        if receiver is not None:
            receiver.close()
        await raffle.close()


async def test_a_receiver_with_another_secret_refuses_the_notice(tmp_path: Path) -> None:
    port, clock = free_port(), SettableClock()
    receiver = Receiver(port, new_secret())
    raffle = await _crossing(tmp_path, port, new_secret(), clock)
    try:
        await relay(raffle.shards, raffle.broker, raffle.clock)

        assert (receiver.refused, receiver.accepted) == (1, [])
        [notice] = await notices(raffle)
        assert notice["state"] == "failed"  # tried again after its backoff
    finally:
        receiver.close()
        await raffle.close()
