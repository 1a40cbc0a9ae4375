"""Automatic blocking: operators' rules that put a user or an address on the deny list."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from raffle.domain.deny import DenyKind, InvalidDenyEntry
from raffle.domain.errors import RaffleError

MAX_MINUTES = 366 * 24 * 60  # a year: longer windows and blocks are deny entries by hand
MAX_THRESHOLD = 1_000_000


class BlockEvent(StrEnum):
    REFUSED_DRAW = "refused_draw"  # a draw answered with a refusal (no chance, denied, ...)
    FAILED_LOGIN = "failed_login"  # a sign-in with a wrong name or password


class BlockSubject(StrEnum):
    USER = "user"
    IP = "ip"

    @property
    def kind(self) -> DenyKind:
        return DenyKind.USER if self is BlockSubject.USER else DenyKind.IP


class UnknownBlockRule(RaffleError):
    code = "unknown_block_rule"


@dataclass(frozen=True, slots=True)
class BlockRule:
    """More than `threshold` `event`s of one `subject` in `window_minutes` denies the
    subject for `block_minutes`."""

    event: BlockEvent
    subject: BlockSubject
    threshold: int
    window_minutes: int
    block_minutes: int
    created_by: str
    created_at: datetime
    id: int = 0  # given when stored

    def __post_init__(self) -> None:
        if not 1 <= self.threshold <= MAX_THRESHOLD:
            raise InvalidDenyEntry(f"threshold must be 1 to {MAX_THRESHOLD}")
        for name in ("window_minutes", "block_minutes"):
            if not 1 <= getattr(self, name) <= MAX_MINUTES:
                raise InvalidDenyEntry(f"{name} must be 1 to {MAX_MINUTES}")

    @property
    def reason(self) -> str:
        return (
            f"automatic: more than {self.threshold} {self.event} in "
            f"{self.window_minutes} min (rule {self.id})"
        )
