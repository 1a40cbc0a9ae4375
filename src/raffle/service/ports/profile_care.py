"""What profiles need besides storage: phone numbers read and masked (their news: IdNews)."""

from __future__ import annotations

from typing import Protocol


class Phones(Protocol):
    def normalise(self, text: str) -> str:
        """The number in E.164; InvalidPhone when it is none."""
        ...

    def masked(self, e164: str) -> str:
        """The number as players see it, its middle digits hidden."""
        ...
