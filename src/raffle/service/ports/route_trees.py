"""Where decision trees are kept: every saved version, in the configuration database."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from raffle.domain.route_trees import RouteTree, TreeVersion


class RouteTreeRepository(Protocol):
    async def get(self, name: str) -> TreeVersion | None:
        """The newest version of the tree, None if never saved or deleted last."""
        ...

    async def all(self) -> list[TreeVersion]:
        """The newest version of every tree not deleted, by name."""
        ...

    async def last_version(self, name: str) -> int:
        """The newest version saved of the name, a deletion's too; 0 if none."""
        ...

    async def add(
        self, name: str, version: int, tree: RouteTree | None, saved_by: str, saved_at: datetime
    ) -> bool:
        """Store `tree` (None: the deletion) as `version` of `name`; False (and nothing
        written) when that version exists already: someone else saved it first."""
        ...
