"""Users, their sessions and roles, and the errors of signing in."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from raffle.domain.errors import RaffleError

NAME = re.compile(r"^[A-Za-z0-9_.\-]{3,32}$")
MIN_PASSWORD = 8


class UserStatus(StrEnum):
    ACTIVE = "active"
    LOCKED = "locked"  # by an operator: no sign-in, no session; everything owned is kept


@dataclass(frozen=True, slots=True)
class User:
    id: str  # the login name: also the user id that rules and operators refer to
    password_hash: str
    is_admin: bool = False
    status: UserStatus = UserStatus.ACTIVE


@dataclass(frozen=True, slots=True)
class StatusChange:
    """An operator locked or unlocked an account: who (None: the command line), when, why."""

    user_id: str
    status: UserStatus
    reason: str
    by: str | None
    at: datetime


REASON_MAX = 255


@dataclass(frozen=True, slots=True)
class Session:
    user_id: str
    is_admin: bool
    expires_at: datetime


class InvalidCredentials(RaffleError):
    code = "invalid_credentials"


class NameTaken(RaffleError):
    code = "name_taken"


class NotAuthenticated(RaffleError):
    code = "not_authenticated"


class SessionEnded(NotAuthenticated):
    """The token's session was ended by an operator (the account locked, a new password)."""

    code = "session_ended"


class Forbidden(RaffleError):
    code = "forbidden"


class RateLimited(RaffleError):
    code = "rate_limited"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UnknownUser(RaffleError):
    code = "unknown_user"


class InvalidInput(RaffleError):
    code = "invalid_input"


class AccountLocked(RaffleError):
    code = "account_locked"


def check_new_user(name: str, password: str) -> None:
    if not NAME.match(name):
        raise InvalidInput("name must be 3-32 letters, digits, '_', '.' or '-'")
    check_password(password)


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise InvalidInput(f"password must have at least {MIN_PASSWORD} characters")
