"""The winners' feed: how an activity shows it, its tie-free order, cursors and masked names."""

from __future__ import annotations

import base64
import binascii
import heapq
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from itertools import islice

from raffle.domain.errors import RaffleError


class FeedDisplay(StrEnum):
    """Seed 004 `show_winning_list`: 0 not shown, 1 one line (a ticker), 2 tiled."""

    HIDDEN = "hidden"
    TICKER = "ticker"
    TILED = "tiled"


class FeedHidden(RaffleError):
    code = "feed_hidden"


class InvalidCursor(RaffleError):
    code = "invalid_cursor"


@dataclass(frozen=True, slots=True, order=True)
class FeedKey:
    """A win's place in the feed. Order ids are unique in their shard table and start with
    their milliseconds, so (order id, shard) is a total order by time with no ties, even
    between shards; no user id in it, so a cursor names nobody."""

    order_id: str
    shard: int

    def token(self) -> str:
        raw = f"{self.order_id}.{self.shard}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def key_of(token: str) -> FeedKey:
    """The key a cursor token holds; InvalidCursor for anything this feed did not make."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        order_id, shard = raw.split(".")
        if not (0 < len(order_id) <= 32 and order_id.isalnum() and shard.isdigit()):
            raise ValueError(raw)
        return FeedKey(order_id, int(shard))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidCursor("the cursor is not one this feed gave") from None


@dataclass(frozen=True, slots=True)
class FeedWin:
    key: FeedKey
    user_id: str
    award_id: int
    won_at: datetime


def newest(shards: Iterable[list[FeedWin]], limit: int) -> list[FeedWin]:
    """The `limit` newest of the shards' pages (each newest first): a merge by key."""
    merged = heapq.merge(*shards, key=lambda w: w.key, reverse=True)
    return list(islice(merged, limit))


def oldest(shards: Iterable[list[FeedWin]], limit: int) -> list[FeedWin]:
    """The `limit` oldest of the shards' pages (each oldest first)."""
    return list(islice(heapq.merge(*shards, key=lambda w: w.key), limit))


def masked(name: str) -> str:
    """A winner as others see them: the first and last character of their name around a
    fixed run of stars ("a***e"), which tells neither the name nor its length; a name of one
    or two characters shows only its first."""
    if len(name) <= 2:
        return f"{name[:1]}***"
    return f"{name[0]}***{name[-1]}"
