"""Shards that count their uses: a draw that never used them opened no transaction."""

from __future__ import annotations

from typing import Any, cast

from raffle.service.ports import Shards


class WatchedShards:
    def __init__(self, shards: Shards) -> None:
        self._shards = shards
        self.uses = 0

    def __getattr__(self, name: str) -> Any:
        self.uses += 1
        return getattr(self._shards, name)

    @property
    def shards(self) -> Shards:
        """Itself, as the shards a use case takes (reading this is no use)."""
        return cast(Shards, self)
