"""The operators' channel: its settings, the broker that hands it the relay's notices, and
the log it falls back to."""

from __future__ import annotations

import base64
import logging
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from raffle.adapters.notice_channel import LogChannel, NoticeRoute
from raffle.domain.delivery import WON
from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import Unavailable
from raffle.domain.notices import NOTICE
from raffle.service.ports import Handler
from raffle.settings import Settings

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
URL = "https://ops.example.com/raffle"


def _message(n: int, topic: str) -> OutboxMessage:
    return OutboxMessage(
        f"m{n}", topic, f"order{n}", f'{{"n": {n}}}', datetime(2026, 11, 25, tzinfo=UTC)
    )


def test_a_webhook_needs_its_secret() -> None:
    with pytest.raises(ValidationError, match="needs RAFFLE_NOTICE_WEBHOOK_SECRET"):
        Settings(notice_webhook_url=URL)


@pytest.mark.parametrize(
    "secret",
    ["", "whsec_" + base64.b64encode(b"short").decode(), base64.b64encode(b"k" * 32).decode(),
     "whsec_not base64!"],
    ids=["empty", "short", "no-prefix", "not-base64"],
)  # fmt: skip
def test_a_weak_or_malformed_secret_is_refused(secret: str) -> None:
    with pytest.raises(ValidationError, match="whsec_ and at least 24 bytes"):
        Settings(notice_webhook_url=URL, notice_webhook_secret=secret)


def test_the_webhook_is_a_web_address_and_its_secret_stays_hidden() -> None:
    with pytest.raises(ValidationError, match="http:// or https://"):
        Settings(notice_webhook_url="ftp://ops.example.com/", notice_webhook_secret=SECRET)
    settings = Settings(notice_webhook_url=URL, notice_webhook_secret=SECRET)
    assert SECRET not in repr(settings)
    assert SECRET not in str(settings.model_dump())


class _Recording:
    """A broker and a channel at once: what each was handed, answering `refuse` for ids in it."""

    def __init__(self, refuse: frozenset[str] = frozenset()) -> None:
        self.handed: list[str] = []
        self.refuse = refuse

    async def publish_many(self, messages: Sequence[OutboxMessage]) -> list[Unavailable | None]:
        return await self.send_many(messages)

    async def send_many(self, messages: Sequence[OutboxMessage]) -> list[Unavailable | None]:
        self.handed += [m.message_id for m in messages]
        return [
            Unavailable(m.message_id) if m.message_id in self.refuse else None for m in messages
        ]

    async def publish(self, message: OutboxMessage) -> None: ...

    async def consume(self, queue: str, handle: Handler) -> None: ...

    async def close(self) -> None: ...


async def test_the_relays_notices_go_to_the_channel_and_the_answers_keep_their_order() -> None:
    broker, channel = _Recording(), _Recording(refuse=frozenset({"m3"}))
    route = NoticeRoute(broker, channel)
    messages = [_message(0, WON), _message(1, NOTICE), _message(2, WON), _message(3, NOTICE)]

    answers = await route.publish_many(messages)

    assert (broker.handed, channel.handed) == (["m0", "m2"], ["m1", "m3"])
    assert [a is None for a in answers] == [True, True, True, False]


async def test_without_a_webhook_a_notice_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert await LogChannel().send_many([_message(7, NOTICE)]) == [None]
    assert "operators' notice" in caplog.text
    assert '{"n": 7}' in caplog.text
