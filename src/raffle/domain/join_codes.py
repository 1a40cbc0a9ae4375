"""Join codes (seed 004 参与码): single-use codes an activity may require, bound to who redeems."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from raffle.domain.errors import RaffleError
from raffle.domain.randomness import RandomSource

# Crockford's base32: no I, L, O or U, so a code read aloud or off paper is not mistyped.
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
LENGTH = 12  # generated codes' symbols
ENTROPY_BITS = LENGTH * math.log2(len(ALPHABET))  # 60 bits: each symbol uniform and independent
MIN_LENGTH, MAX_LENGTH = 4, 32  # of imported codes, once normalised
SOURCE_MAX, REMARK_MAX = 64, 255
MAX_PER_REQUEST = 100_000  # codes generated or imported at once
GROUP = 4  # symbols between the hyphens of a code as shown

# How a typed code is read: Crockford's decoding folds the letters it leaves out onto digits.
_FOLD = str.maketrans({"I": "1", "L": "1", "O": "0"})
_SEPARATORS = str.maketrans("", "", "- \t")


@dataclass(frozen=True, slots=True)
class JoinCode:
    activity_id: int
    code: str  # normalised: upper-case Crockford symbols, no separators
    source: str  # where it came from: a batch's name, a partner, a channel
    remark: str
    created_at: datetime
    user_id: str | None = None  # who redeemed it; a binding never goes away
    bound_at: datetime | None = None

    @property
    def used(self) -> bool:
        return self.user_id is not None


@dataclass(frozen=True, slots=True)
class JoinCodeCounts:
    activity_id: int
    total: int
    used: int

    @property
    def unused(self) -> int:
        return self.total - self.used


class JoinCodeRequired(RaffleError):
    """The activity requires a join code and the user has not redeemed one."""

    code = "join_code_required"


class JoinCodeInvalid(RaffleError):
    """No such code in the activity (or not a code at all)."""

    code = "join_code_invalid"


class JoinCodeUsed(RaffleError):
    """The code was redeemed by someone else."""

    code = "join_code_used"


class InvalidJoinCodes(RaffleError):
    """Codes to import that are not codes, each named with its position."""

    code = "invalid_join_codes"

    def __init__(self, problems: list[tuple[int, str]]) -> None:
        super().__init__("; ".join(f"codes.{i}: {message}" for i, message in problems))
        self.problems = problems


def generate(rng: RandomSource) -> str:
    """A new code: `LENGTH` symbols each drawn uniformly from `ALPHABET` by `rng`."""
    return "".join(ALPHABET[rng.below(len(ALPHABET))] for _ in range(LENGTH))


def normalise(typed: str) -> str | None:
    """The code a person typed, as stored: case, hyphens and spaces ignored, I and L read as
    1 and O as 0; None if it cannot be a code."""
    code = typed.upper().translate(_SEPARATORS).translate(_FOLD)
    if not MIN_LENGTH <= len(code) <= MAX_LENGTH or any(s not in ALPHABET for s in code):
        return None
    return code


def shown(code: str) -> str:
    """The code as printed for people: hyphens every `GROUP` symbols (normalise undoes them)."""
    return "-".join(code[i : i + GROUP] for i in range(0, len(code), GROUP))


def check_label(name: str, value: str, longest: int) -> str | None:
    """Why a source or remark cannot be stored, or None."""
    if len(value) > longest or any(not c.isprintable() for c in value):
        return f"{name} is at most {longest} printable characters"
    return None
