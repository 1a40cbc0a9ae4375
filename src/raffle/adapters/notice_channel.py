"""Operators' notices to their channel (a webhook signed as Standard Webhooks say, or the log)."""

# The broker here hands the relay's notices to the channel, so the relay's retries and
# backoff apply to them.

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Protocol

import httpx
from standardwebhooks import Webhook

from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import Unavailable
from raffle.domain.notices import NOTICE
from raffle.service.ports import Broker, Clock, Handler

log = logging.getLogger(__name__)


class NotDelivered(Unavailable):
    code = "notice_not_delivered"


class NoticeChannel(Protocol):
    async def send_many(self, messages: Sequence[OutboxMessage]) -> list[Unavailable | None]:
        """Per message, in order: None once the channel took it, else why not."""
        ...

    async def close(self) -> None: ...


class WebhookChannel:
    """Each notice POSTed as JSON with the headers `webhook-id` (the message id: the receiver
    deduplicates on it), `webhook-timestamp` (Unix seconds) and `webhook-signature`
    (`v1,` + base64 of HMAC-SHA256 over `id.timestamp.body` with the secret). Taken when
    the receiver answers 2xx; anything else is tried again by the relay, with its backoff."""

    def __init__(self, url: str, secret: str, clock: Clock, *, timeout: float) -> None:
        self._url = url
        self._signer = Webhook(secret)
        self._clock = clock
        self._client = httpx.AsyncClient(timeout=timeout, follow_redirects=False)

    async def send_many(self, messages: Sequence[OutboxMessage]) -> list[Unavailable | None]:
        return list(await asyncio.gather(*map(self._send, messages)))

    async def _send(self, message: OutboxMessage) -> Unavailable | None:
        at = self._clock.now()
        headers = {
            "content-type": "application/json",
            "webhook-id": message.message_id,
            "webhook-timestamp": str(int(at.timestamp())),
            "webhook-signature": self._signer.sign(message.message_id, at, message.payload),
        }
        try:
            answer = await self._client.post(self._url, content=message.payload, headers=headers)
        except httpx.HTTPError as error:
            return NotDelivered(f"notice {message.message_id} not delivered: {error!r}")
        if answer.is_success:
            return None
        return NotDelivered(
            f"notice {message.message_id}: the webhook answered {answer.status_code}"
        )

    async def close(self) -> None:
        await self._client.aclose()


class LogChannel:
    """No webhook configured (the embedded default): each notice is a warning in the log."""

    async def send_many(self, messages: Sequence[OutboxMessage]) -> list[Unavailable | None]:
        for message in messages:
            log.warning("operators' notice: %s", message.payload)
        return [None] * len(messages)

    async def close(self) -> None:
        return None


class NoticeRoute:
    """The broker, but the outbox's notices go to the operators' channel: the relay claims,
    sends, marks and backs off for them as for wins, and nothing consumes them."""

    def __init__(self, broker: Broker, channel: NoticeChannel) -> None:
        self._broker = broker
        self._channel = channel

    async def publish(self, message: OutboxMessage) -> None:
        (answer,) = await self.publish_many([message])
        if answer is not None:
            raise answer

    async def publish_many(self, messages: Sequence[OutboxMessage]) -> list[Unavailable | None]:
        notices = [n for n, m in enumerate(messages) if m.topic == NOTICE]
        if not notices:
            return await self._broker.publish_many(messages)
        others = [n for n, m in enumerate(messages) if m.topic != NOTICE]
        sent, published = await asyncio.gather(
            self._channel.send_many([messages[n] for n in notices]),
            self._broker.publish_many([messages[n] for n in others]),
        )
        answers: list[Unavailable | None] = [None] * len(messages)
        for n, answer in (*zip(notices, sent, strict=True), *zip(others, published, strict=True)):
            answers[n] = answer
        return answers

    async def consume(self, queue: str, handle: Handler) -> None:
        await self._broker.consume(queue, handle)

    async def close(self) -> None:
        await self._broker.close()
        await self._channel.close()
