"""Where draws get their randomness: a port, so tests can pin it and production uses a CSPRNG."""

from __future__ import annotations

from typing import Protocol


class RandomSource(Protocol):
    def below(self, n: int) -> int:
        """A uniformly random integer in [0, n), without bias."""
        ...
