"""Paid content: operators write it and sell it; players read the body of what they hold."""

# Won as a prize now, bought later; those without it get the preview and the price.

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from raffle.domain.content import (
    Content,
    ContentExists,
    ContentState,
    ContentText,
    IllegalContentState,
    PaymentRequired,
    UnknownContent,
)
from raffle.domain.fulfilment import AccessGrant
from raffle.service.ports import Clock, Shards, UnitOfWork

ON_SALE = (ContentState.ON_SALE,)


@dataclass(frozen=True, slots=True)
class Held:
    """A grant of mine, and the content it opens (None: named by a prize, not in the
    catalogue)."""

    grant: AccessGrant
    content: Content | None


@dataclass(frozen=True, slots=True)
class Opened:
    content: Content
    held: bool  # the player may read its body


async def create(
    content_id: str, text: ContentText, *, uow: Callable[[], UnitOfWork], clock: Clock
) -> Content:
    """New content, a draft until put on sale."""
    content = Content.draft(content_id, text, clock.now())
    async with uow() as writer:
        if not await writer.content.add(content):
            raise ContentExists(f"content {content_id!r} exists")
        await writer.commit()
    return content


async def edit(
    content_id: str, text: ContentText, *, uow: Callable[[], UnitOfWork], clock: Clock
) -> Content:
    """New text for the content, whatever its state; on sale, it keeps a price."""
    now = clock.now()
    return await _changed(content_id, lambda stored: stored.edited(text, now), uow)


async def move(
    content_id: str, to: ContentState, *, uow: Callable[[], UnitOfWork], clock: Clock
) -> Content:
    """Put the content on sale or take it off (draft -> on_sale <-> off_sale)."""
    now = clock.now()
    return await _changed(content_id, lambda stored: stored.moved(to, now), uow)


async def _changed(
    content_id: str, change: Callable[[Content], Content], uow: Callable[[], UnitOfWork]
) -> Content:
    """The stored content changed by `change`, written back.

    Guarded by the state read: a change of state meanwhile (to on sale) is not undone, nor
    is a price of 0 written over content that went on sale."""
    async with uow() as writer:
        stored = await _stored(writer, content_id)
        changed = change(stored)
        if not await writer.content.replace(changed, stored.state):
            raise await _moved_meanwhile(writer, content_id)
        await writer.commit()
    return changed


async def listed(
    uow: Callable[[], UnitOfWork],
    *,
    states: tuple[ContentState, ...] | None = None,
    after: str | None = None,
    limit: int = 50,
) -> list[Content]:
    """Content in `states` (every state when None), by id, from after the id `after`."""
    async with uow() as reader:
        return await reader.content.listing(states, after, limit)


async def stored(content_id: str, uow: Callable[[], UnitOfWork]) -> Content:
    async with uow() as reader:
        return await _stored(reader, content_id)


async def open_content(
    user_id: str, content_id: str, *, uow: Callable[[], UnitOfWork], shards: Shards
) -> Opened:
    """The content as the player sees it: on sale, or held by them whatever its state
    (seed 000: taking it off sale does not take it from those who paid)."""
    async with uow() as reader:
        content = await reader.content.get(content_id)
    async with shards.for_user(user_id) as mine:
        held = await mine.grants.get(user_id, content_id) is not None
    if content is None or not (held or content.visible):
        raise UnknownContent(f"no content {content_id!r} on sale")
    return Opened(content, held)


async def read(
    user_id: str, content_id: str, *, uow: Callable[[], UnitOfWork], shards: Shards
) -> Content:
    """The content whose body the player may read; PaymentRequired, with its price, when
    they do not hold it."""
    opened = await open_content(user_id, content_id, uow=uow, shards=shards)
    if not opened.held:
        raise PaymentRequired(content_id, opened.content.text.price_cents)
    return opened.content


async def my_content(user_id: str, *, uow: Callable[[], UnitOfWork], shards: Shards) -> list[Held]:
    """What I hold, oldest grant first, with the content of each."""
    async with shards.for_user(user_id) as mine:
        grants = await mine.grants.of_user(user_id)
    async with uow() as reader:
        found = await reader.content.many({g.content_id for g in grants})
    return [Held(g, found.get(g.content_id)) for g in grants]


async def _stored(reader: UnitOfWork, content_id: str) -> Content:
    if (found := await reader.content.get(content_id)) is None:
        raise UnknownContent(f"no content {content_id!r}")
    return found


async def _moved_meanwhile(reader: UnitOfWork, content_id: str) -> IllegalContentState:
    now = await _stored(reader, content_id)
    return IllegalContentState(f"content {content_id!r} changed state meanwhile", now.state)
