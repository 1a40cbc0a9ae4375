"""What profiles need besides storage: phone numbers read and masked, and news of changes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from typing import Protocol


class Phones(Protocol):
    def normalise(self, text: str) -> str:
        """The number in E.164; InvalidPhone when it is none."""
        ...

    def masked(self, e164: str) -> str:
        """The number as players see it, its middle digits hidden."""
        ...


class ProfileNews(Protocol):
    """How every process learns that profiles changed, to forget its copies of them."""

    async def announce(self, user_ids: Collection[str] | None) -> None:
        """Tell every process these users' profiles changed (None: any may have)."""
        ...

    def changes(self) -> AsyncIterator[Collection[str] | None]:
        """Yields the users whose profiles changed; None when any may have (at first, and
        after news may have been missed), until cancelled."""
        ...
