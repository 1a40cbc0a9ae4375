"""Identifiers: time-ordered order ids and 128-bit message ids, from the CSPRNG."""

from __future__ import annotations

import secrets
from datetime import datetime


def order_id(now: datetime) -> str:
    """24 hex characters: milliseconds since the epoch, then 48 random bits. Sorting by id
    sorts by time, which is what cursor pagination of a user's history relies on."""
    return f"{int(now.timestamp() * 1000):012x}{secrets.token_hex(6)}"


def message_id() -> str:
    return secrets.token_hex(16)
