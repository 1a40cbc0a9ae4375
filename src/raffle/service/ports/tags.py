"""The doors to tags: where they are stored, and the language their conditions are in."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from raffle.domain.profiles import Profile
from raffle.domain.tags import Tag

# A compiled condition: whether it holds for a profile's facts (with `tags` answered).
Predicate = Callable[[Mapping[str, object]], bool]
Check = Callable[[Mapping[str, Tag]], None]  # raises to refuse a change


@dataclass(frozen=True, slots=True)
class StoredTags:
    """Every tag at one version, and the version of each tag's last change (its definition
    or its members): a process keeps what it read of a tag until that moves on."""

    version: int
    tags: Mapping[str, Tag]
    revisions: Mapping[str, int]


class ProfilePages(Protocol):
    """What a tag's preview scans: `ProfileRepository.page`, or any other source of
    profiles by user id."""

    async def page(self, after: str | None, limit: int) -> Sequence[Profile]: ...


class TagLanguage(Protocol):
    """Compiles a condition once, when its tag is saved or first read in a process."""

    def compile(self, condition: str) -> Predicate:
        """MalformedCondition (with its line and column) if it cannot be compiled. The
        predicate never raises: a condition that fails for a profile does not hold."""
        ...


class TagStore(Protocol):
    """Tags and static tags' members in the configuration database, with a version every
    change moves on (as the switches have) so that processes see a change."""

    async def version(self) -> int: ...

    async def load(self) -> StoredTags:
        """The version (read first), then every tag and its revision."""
        ...

    async def save(self, tag: Tag, check: Check) -> bool:
        """Insert the tag or replace the one of its name (its members stay if it stays
        static, and go if it becomes dynamic); True if it is new. `check` is given the
        other tags as they are once changes wait for this one, and may refuse (raise)."""
        ...

    async def delete(self, name: str, check: Check) -> bool:
        """Delete the tag and its members, once `check` (given the other tags, as `save`)
        accepts; False if there was none."""
        ...

    async def members(self, name: str) -> frozenset[str]:
        """The user ids a static tag lists."""
        ...

    async def add_members(self, name: str, user_ids: Iterable[str]) -> int:
        """Add users to a static tag (those already there stay once); how many were new."""
        ...

    async def remove_members(self, name: str, user_ids: Iterable[str]) -> int:
        """How many of them were members."""
        ...
