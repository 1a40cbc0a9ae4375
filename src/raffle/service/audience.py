"""Tags as this process holds them: conditions compiled once, member lists cached, kept fresh."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import date

from raffle.domain.profiles import Profile, facts
from raffle.domain.tags import MalformedCondition, Tag, TagKind, evaluation_order
from raffle.service.news import follow
from raffle.service.ports import SwitchNews
from raffle.service.ports.tags import Predicate, TagLanguage, TagStore

log = logging.getLogger(__name__)

HELD_AT_MOST = 100_000  # answers kept; all are forgotten when there are more


def _never(facts: Mapping[str, object]) -> bool:
    return False


class TagBoard:
    """The `Audience` of the draw and the router. `holds` reads no database in the common
    case: conditions are compiled when the tags are read, a static tag's members are read
    once and kept, and both are read again only when the tags' version moves on (`watch()`
    hears of it through the news, as the switches do; `refresh()` looks at once)."""

    def __init__(self, store: TagStore, news: SwitchNews, language: TagLanguage) -> None:
        self.store, self.news, self.language = store, news, language
        self.version = -1  # nothing read yet
        self.tags: Mapping[str, Tag] = {}
        self._predicates: dict[str, Predicate] = {}
        self._orders: dict[str, list[str]] = {}
        self._revisions: Mapping[str, int] = {}
        self._members: dict[str, frozenset[str]] = {}
        # One read of a tag's members at a time, shared by every draw asking meanwhile.
        self._reading: dict[tuple[str, int | None], asyncio.Future[frozenset[str]]] = {}
        self._refreshing = asyncio.Lock()
        # The last answer for a tag, user and day, with the profile and the tags' version it
        # was given for: the profiles' cache hands out the same object until the profile
        # changes, so an answer is reused only while neither the profile nor the tags moved.
        self._held: dict[tuple[str, str, date], tuple[Profile, int, bool]] = {}

    async def holds(self, tag: str, profile: Profile, today: date) -> bool:
        """Whether the tag holds the user; an unknown tag holds no one."""
        key = (tag, profile.user_id, today)
        if (held := self._held.get(key)) and held[0] is profile and held[1] == self.version:
            return held[2]
        version, answer = self.version, await self.answer(tag, profile, today)
        if len(self._held) >= HELD_AT_MOST:
            self._held.clear()
        self._held[key] = (profile, version, answer)
        return answer

    async def answer(self, tag: str, profile: Profile, today: date) -> bool:
        """Whether the tag holds the user, worked out now and not kept (a preview's scan)."""
        if (order := self._orders.get(tag)) is None:
            return False
        answers: dict[str, bool] = {}
        known = facts(profile, today) | {"tags": answers}
        for name in order:  # the tags it refers to first
            if self.tags[name].kind is TagKind.STATIC:
                answers[name] = profile.user_id in await self.members(name)
            else:
                answers[name] = self._predicates[name](known)
        return answers[tag]

    async def members(self, name: str) -> frozenset[str]:
        """A static tag's members, read from the store once per revision of the tag."""
        if (found := self._members.get(name)) is not None:
            return found
        key = (name, self._revisions.get(name))
        if (reading := self._reading.get(key)) is None:
            reading = self._reading[key] = asyncio.ensure_future(self._read(*key))
        return await asyncio.shield(reading)

    async def _read(self, name: str, revision: int | None) -> frozenset[str]:
        try:
            found = await self.store.members(name)
        finally:
            del self._reading[(name, revision)]
        if self._revisions.get(name) == revision:  # not read across a change: keep it
            self._members[name] = found
        return found

    async def refresh(self) -> None:
        """Read the tags again if they moved on since this process read them; what was
        read of a tag that did not change (its members, its compiled condition) stays."""
        async with self._refreshing:
            if await self.store.version() == self.version:
                return
            stored = await self.store.load()
            predicates = {
                n: self._compiled(t) for n, t in stored.tags.items() if t.kind is TagKind.DYNAMIC
            }
            before = self._revisions
            self._members = {
                n: m for n, m in self._members.items() if stored.revisions.get(n) == before.get(n)
            }
            self.tags, self._revisions, self._predicates = stored.tags, stored.revisions, predicates
            self._orders = {name: evaluation_order(name, stored.tags) for name in stored.tags}
            self.version = stored.version

    def _compiled(self, tag: Tag) -> Predicate:
        before = self.tags.get(tag.name)
        if before == tag and tag.name in self._predicates:
            return self._predicates[tag.name]  # unchanged: compiled once
        try:
            return self.language.compile(tag.condition)
        except MalformedCondition:  # saved by another version of the language: holds no one
            log.warning("tag %s: its condition no longer compiles", tag.name, exc_info=True)
            return _never

    async def watch(self) -> None:
        """Refresh on every piece of news, until cancelled."""
        await follow(self.news, self.refresh, "tags")
