"""Identifiers: time-ordered order ids and 128-bit message ids, from the CSPRNG."""

from __future__ import annotations

import secrets
from datetime import datetime

# The last order id's milliseconds and random part: a second id in the same millisecond
# goes after it (a user's draws can be that close now), as ULIDs do.
_last = [0, 0]
_RANDOM_BITS = 48
_STEP_BITS = 16  # ids after the first of a millisecond go up by 1..2^16: still not guessable


def order_id(now: datetime) -> str:
    """24 hex characters: milliseconds since the epoch, then 48 bits from the CSPRNG. Sorting
    by id sorts by time, which is what cursor pagination of a user's history relies on;
    within one millisecond, by the order this process made them in."""
    ms = int(now.timestamp() * 1000)
    last_ms, last_random = _last
    if ms == last_ms and (after := last_random + 1 + secrets.randbits(_STEP_BITS)) < (
        1 << _RANDOM_BITS
    ):
        random = after
    else:
        # A new millisecond starts in the lower half, leaving room for the steps after it.
        random = secrets.randbits(_RANDOM_BITS - 1)
    _last[:] = ms, random
    return f"{ms:012x}{random:012x}"


def message_id() -> str:
    return secrets.token_hex(16)
