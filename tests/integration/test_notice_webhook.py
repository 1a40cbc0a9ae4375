"""Operators' notices through the outbox relay to a real webhook: signed, checked by the
receiver, and delivered after the receiver was down for a minute (the relay's backoff, on an
injected clock); 300 draws at once crossing a threshold alert it once."""

from __future__ import annotations

import base64
import secrets
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from raffle.bootstrap import Raffle
from raffle.entrypoints.worker import Parts
from raffle.service.draw import Draw, draw
from raffle.service.relay import relay
from raffle.settings import Settings
from tests.integration.notices import notices
from tests.integration.raffles import (
    ACTIVITY,
    PRIZE,
    STRATEGY,
    Build,
    SettableClock,
    campaign,
    wired,
)
from tests.integration.test_delivery_pipeline import running
from tests.integration.test_draw_concurrency import run
from tests.integration.webhook_receiver import Receiver
from tests.services import LOOPBACK, free_port


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def webhook(port: int, secret: str, *, timeout: float) -> dict[str, Any]:
    """The settings sending notices to the webhook on `port`; `timeout` the publishes'."""
    return {
        "notice_webhook_url": f"http://{LOOPBACK}:{port}/raffle-notices",
        "notice_webhook_secret": secret,
        "publish_timeout_seconds": timeout,
        "republish_after_seconds": 3600.0,  # no compensation job runs here
    }


async def down_for_a_minute(raffle: Raffle, clock: SettableClock) -> None:
    """A relay round every 2 s of `clock` for a minute, while nothing listens at the webhook."""
    down_since = clock.current
    while clock.current - down_since < timedelta(minutes=1):
        await relay(raffle.shards, raffle.broker, raffle.clock)
        clock.current += timedelta(seconds=2)


async def _crossing(tmp_path: Path, port: int, secret: str, clock: SettableClock) -> Raffle:
    """An embedded raffle whose notices go to the webhook on `port`, after two draws that
    leave 1 unit of a prize warned at 1."""
    settings = Settings(
        database_url=f"sqlite:///{tmp_path}/raffle.db",
        **webhook(port, secret, timeout=0.2),  # the wins' messages: nobody consumes them here
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

        await down_for_a_minute(raffle, clock)
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


# The wins' messages go as each deployment sends them: in process, or through RabbitMQ.
@pytest.mark.parametrize("build", ["sqlite", "postgres+redis+rabbitmq"], indirect=True)
async def test_three_hundred_draws_crossing_a_threshold_alert_a_webhook_down_for_a_minute_once(
    build: Build,
) -> None:
    port, secret, clock = free_port(), new_secret(), SettableClock()
    # 10 units outlast the draws: falling to the threshold is the only crossing to alert.
    loaded = campaign(rate="1", stock=310, warning=20, now=clock.current)
    raffle = await build(loaded, clock, **webhook(port, secret, timeout=5.0))

    results, failures = await run(raffle, [Draw(f"user{n:03d}", ACTIVITY) for n in range(300)])

    assert (len(results), +failures) == (300, Counter())
    assert all(r.award_id == PRIZE for r in results)
    receiver = None
    try:
        # The worker's consumers take the wins' messages (the in-process broker confirms one
        # only once handled); the relay's rounds are the test's, on its clock.
        async with running(raffle, parts=Parts(relay=False, jobs=False)):
            await down_for_a_minute(raffle, clock)
            [failing] = await notices(raffle)
            assert (failing["kind"], failing["state"]) == ("stock_warning", "failed")

            receiver = Receiver(port, secret)
            for _ in range(3):  # its backoff passed, then twice more: nothing left to send
                clock.current += timedelta(minutes=1)
                await relay(raffle.shards, raffle.broker, raffle.clock)

        assert receiver.refused == 0  # every POST carried the right signature
        [alert] = receiver.accepted
        assert (alert["kind"], alert["strategy_id"], alert["award_id"]) == (
            "stock_warning",
            STRATEGY,
            PRIZE,
        )
        assert (alert["left"], alert["stock"], alert["warning_surplus"]) == (20, 310, 20)
        assert alert["order_id"] in {r.order_id for r in results}  # the draw whose take crossed
        [sent] = await notices(raffle)
        assert sent["state"] == "published"
    finally:
        if receiver is not None:
            receiver.close()
