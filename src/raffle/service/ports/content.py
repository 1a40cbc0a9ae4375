"""Where paid content is kept: the configuration database."""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from raffle.domain.content import Content, ContentState


class ContentRepository(Protocol):
    async def add(self, content: Content) -> bool:
        """Store new content; False (nothing written) when its id is taken."""
        ...

    async def get(self, content_id: str) -> Content | None: ...

    async def replace(self, content: Content, was: ContentState) -> bool:
        """Write the content's text, state and time over the stored one while that is still
        in state `was` (a compare-and-set); False, nothing written, when it is not."""
        ...

    async def listing(
        self, states: Collection[ContentState] | None, after: str | None, limit: int
    ) -> list[Content]:
        """Content in `states` (any when None), by id, from after the id `after`."""
        ...

    async def many(self, content_ids: Collection[str]) -> dict[str, Content]:
        """The stored ones of these ids."""
        ...
