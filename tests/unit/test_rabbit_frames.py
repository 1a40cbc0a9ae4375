"""The publish frames packed by hand are byte for byte what pamqp makes of the same message."""

from __future__ import annotations

from datetime import UTC, datetime

import pamqp.frame
import pytest
from pamqp import commands
from pamqp.body import ContentBody
from pamqp.header import ContentHeader

from raffle.adapters.broker.rabbit_frames import publish_frames
from raffle.domain.draws import OutboxMessage


def _pamqp(message: OutboxMessage, channel: int, most: int) -> bytes:
    body = message.payload.encode()
    properties = commands.Basic.Properties(
        content_type="application/json",
        delivery_mode=2,
        correlation_id=message.key,
        message_id=message.message_id,
        timestamp=message.created_at,
        message_type=message.topic,
    )
    frames = [
        commands.Basic.Publish(exchange="raffle", routing_key=message.topic, mandatory=True),
        ContentHeader(properties=properties, body_size=len(body)),
        *(ContentBody(body[i : i + most]) for i in range(0, len(body), most)),
    ]
    return b"".join(pamqp.frame.marshal(frame, channel) for frame in frames)


@pytest.mark.parametrize(
    ("payload", "most"),
    [('{"order_id": "o1", "n": 1}', 131064), ("x" * 1000, 300), ("", 100), ("é" * 50, 7)],
)
def test_the_frames_are_pamqps(payload: str, most: int) -> None:
    message = OutboxMessage(
        "a" * 32, "award.won", "order-123", payload, datetime(2026, 11, 22, 5, 6, 7, tzinfo=UTC)
    )
    packed = publish_frames(message, exchange="raffle", channel=3, most=most)
    assert packed == _pamqp(message, 3, most)


def test_a_naive_time_is_taken_as_utc_and_a_long_string_is_refused() -> None:
    naive = OutboxMessage("m", "award.won", "k", "{}", datetime(2026, 11, 22, 5, 6, 7))
    aware = OutboxMessage("m", "award.won", "k", "{}", datetime(2026, 11, 22, 5, 6, 7, tzinfo=UTC))
    assert publish_frames(naive, exchange="raffle", channel=1, most=100) == publish_frames(
        aware, exchange="raffle", channel=1, most=100
    )
    too_long = OutboxMessage("m", "award.won", "k" * 256, "{}", aware.created_at)
    with pytest.raises(ValueError, match="short string"):
        publish_frames(too_long, exchange="raffle", channel=1, most=100)
