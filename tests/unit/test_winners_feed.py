"""The winners' feed's pure parts: masked names, cursors that name nobody and refuse what the
feed did not make, the merge of the shards' pages by the tie-free key, and the first page
kept per process."""

from __future__ import annotations

import asyncio
import base64
from datetime import UTC, datetime

import pytest

from raffle.domain.winners_feed import (
    FeedDisplay,
    FeedKey,
    FeedWin,
    InvalidCursor,
    key_of,
    masked,
    newest,
    oldest,
)
from raffle.service.winners_feed import FeedCache, FeedPage

AT = datetime(2026, 11, 11, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("alice", "a***e"),
        ("alexandre", "a***e"),
        ("bo", "b***"),
        ("x", "x***"),
        ("张三丰", "张***丰"),
    ],
)
def test_a_name_shows_its_first_and_last_character_and_not_its_length(
    name: str, shown: str
) -> None:
    assert masked(name) == shown


def test_a_cursor_gives_back_its_key_and_names_no_user() -> None:
    key = FeedKey("019a2b3c4d5e6f708192a3b4", 7)
    token = key.token()
    assert key_of(token) == key
    assert "=" not in token
    assert token.replace("-", "").replace("_", "").isalnum()


@pytest.mark.parametrize(
    "token",
    [
        "",
        "!!!!",
        "bm90LWEta2V5",  # "not-a-key"
        base64.urlsafe_b64encode(b"abc.").decode(),
        base64.urlsafe_b64encode(b"abc.-1").decode(),
        base64.urlsafe_b64encode(b"a b.1").decode(),
        base64.urlsafe_b64encode(b"a.1.2").decode(),
        base64.urlsafe_b64encode(b"\xff\xfe.1").decode(),
        base64.urlsafe_b64encode(b"x" * 33 + b".1").decode(),
    ],
)
def test_a_cursor_the_feed_did_not_make_is_refused(token: str) -> None:
    with pytest.raises(InvalidCursor):
        key_of(token)


def _wins(*keys: tuple[str, int]) -> list[FeedWin]:
    return [FeedWin(FeedKey(o, s), "u", 1, AT) for o, s in keys]


def test_the_shards_pages_merge_by_order_id_then_shard() -> None:
    zero = _wins(("05", 0), ("03", 0), ("01", 0))  # each newest first
    one = _wins(("05", 1), ("04", 1), ("01", 1))
    merged = [(w.key.order_id, w.key.shard) for w in newest([zero, one], 5)]
    assert merged == [("05", 1), ("05", 0), ("04", 1), ("03", 0), ("01", 1)]
    upward = [(w.key.order_id, w.key.shard) for w in oldest([zero[::-1], one[::-1]], 3)]
    assert upward == [("01", 0), ("01", 1), ("03", 0)]


def _page(n: int) -> FeedPage:
    return FeedPage(FeedDisplay.TICKER, [], None, str(n))


async def test_the_first_page_is_read_once_until_its_time_is_up() -> None:
    now = [0.0]
    cache = FeedCache(ttl=2.0, clock=lambda: now[0])
    reads = [0]

    async def read() -> FeedPage:
        reads[0] += 1
        await asyncio.sleep(0)
        return _page(reads[0])

    together = await asyncio.gather(*(cache.first(1, 10, read) for _ in range(100)))
    assert {p.newer for p in together} == {"1"}  # 100 at once: one read
    now[0] = 1.9
    assert (await cache.first(1, 10, read)).newer == "1"
    assert (await cache.first(2, 10, read)).newer == "2"  # another activity: its own
    now[0] = 2.0
    assert (await cache.first(1, 10, read)).newer == "3"
    assert reads[0] == 3


async def test_a_failed_read_is_not_kept() -> None:
    cache = FeedCache(ttl=60.0, clock=lambda: 0.0)

    async def fails() -> FeedPage:
        raise RuntimeError("database down")

    async def works() -> FeedPage:
        return _page(1)

    with pytest.raises(RuntimeError):
        await cache.first(1, 10, fails)
    assert (await cache.first(1, 10, works)).newer == "1"
