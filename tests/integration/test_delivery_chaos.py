"""Chaos: `raffle worker` processes for the relay and the consumers killed again and again,
the broker restarted once, wins drawn all along; after healing every win is delivered once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from raffle.settings import Settings
from tests.integration.delivery_world import (
    counts,
    delivery_campaign,
    drained,
    draw_wins,
    effects_match_facts,
    fresh_queues,
    pipeline,
)
from tests.services import RabbitMQServer

USERS, EACH = 100, 10  # 1,000 wins
KILLS = 8
THRESHOLD = 3.0  # seconds: the compensation job's age


class Worker:
    """One `raffle worker` process with some of its parts, killed with SIGKILL like a crash."""

    def __init__(self, settings: Settings, args: list[str], log: Path) -> None:
        env = {**os.environ, **_env(settings)}
        self._command = [str(Path(sys.executable).parent / "raffle"), "worker", *args]
        self._env, self._log = env, log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self._log.open("ab") as log:
            self.process = subprocess.Popen(
                self._command, env=self._env, stdout=log, stderr=log, start_new_session=True
            )

    def kill(self) -> None:
        if self.process is not None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            self.process = None


def _env(settings: Settings) -> dict[str, str]:
    names = ("database_url", "shard_urls", "shard_tables", "broker_url", "delivery_attempts")
    names += ("publish_timeout_seconds", "republish_after_seconds")
    return {f"RAFFLE_{n.upper()}": str(getattr(settings, n)) for n in names}


async def test_chaos_1000_wins_delivered_once(
    make_database_url: Callable[[str], Awaitable[str]],
    rabbitmq_server: RabbitMQServer,
    tmp_path: Path,
) -> None:
    await fresh_queues(rabbitmq_server.url)
    settings = Settings(
        database_url=await make_database_url("postgres"),
        shard_urls=await make_database_url("postgres"),
        shard_tables=4,
        broker_url=rabbitmq_server.url,
        # A consumer killed with a message in flight counts one failed delivery of it: the
        # limit must exceed the crashes one message can live through.
        delivery_attempts=20,
        publish_timeout_seconds=2.0,
        republish_after_seconds=THRESHOLD,
    )
    raffle = await pipeline(settings, delivery_campaign())
    relay = Worker(settings, ["--relay", "--no-consumers", "--jobs"], tmp_path / "relay.log")
    consumer = Worker(settings, ["--no-relay", "--consumers", "--no-jobs"], tmp_path / "c.log")
    try:
        relay.start()
        consumer.start()

        async def chaos() -> None:
            for kill in range(KILLS):
                await asyncio.sleep(1.0)
                victim = relay if kill % 2 else consumer
                victim.kill()
                if kill == KILLS // 2:
                    await asyncio.to_thread(rabbitmq_server.restart)
                await asyncio.sleep(0.3)
                victim.start()

        async def wins() -> list[str]:
            orders: list[str] = []
            for _ in range(EACH):  # a draw per user at a time, spread over the chaos
                orders += await draw_wins(raffle, users=USERS, each=1)
                await asyncio.sleep(0.8)
            return orders

        orders, _ = await asyncio.gather(wins(), chaos())
        assert len(orders) == USERS * EACH
        healed = time.monotonic()
        found = await drained(raffle, len(orders), within=60)
        took = time.monotonic() - healed
        assert (found.completed, found.delivered, found.failed) == (1000, 1000, 0)
        assert (await counts(raffle, unpublished_after=THRESHOLD)).unpublished == 0
        await effects_match_facts(raffle, users=USERS, each=EACH)
        print(f"chaos: drained {took:.1f}s after healing")
    finally:
        relay.kill()
        consumer.kill()
        await raffle.close()
