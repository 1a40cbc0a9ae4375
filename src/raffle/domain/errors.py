"""Domain errors: every one has a stable code that the edges map to HTTP or CLI messages."""

from __future__ import annotations

from enum import Enum

Path = tuple[str | int, ...]


class RaffleError(Exception):
    """Base of every error the platform reports to a caller on purpose."""

    code = "raffle_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class InvalidConfig(RaffleError):
    """A strategy, award or rule that cannot be run as written; `path` points at the field."""

    code = "invalid_config"

    def __init__(self, message: str, path: Path = ()) -> None:
        super().__init__(message)
        self.path = path

    def at(self, *prefix: str | int) -> InvalidConfig:
        """The same error, located under `prefix` (used when nesting validation)."""
        return InvalidConfig(self.message, (*prefix, *self.path))

    def __str__(self) -> str:
        where = ".".join(str(p) for p in self.path)
        return f"{where}: {self.message}" if where else self.message


class InvalidFields(RaffleError):
    """Input with problems, each named by its field (`problems`: (field, message) pairs)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))
        self.problems = problems


class IllegalState(RaffleError):
    """A step its subject's current state does not allow; `current` names that state."""

    def __init__(self, message: str, current: Enum) -> None:
        super().__init__(message)
        self.current = current


class Unavailable(RaffleError):
    """A part the platform needs (cache, database) did not answer: retry shortly."""

    code = "unavailable"
    retry_after = 1  # seconds, for the answer's Retry-After


class Contention(Unavailable):
    """The database gave up on this transaction to break a deadlock: it changed nothing, and
    running it again is safe."""

    code = "contention"
