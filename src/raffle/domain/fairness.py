"""Committed server seeds and the deterministic randomness a draw derives from them."""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from raffle.domain.awards import Award
from raffle.domain.errors import RaffleError
from raffle.domain.rules import LISTED, parse_listed
from raffle.domain.strategy import Strategy

SEED_BYTES = 32
CLIENT_SEED_LENGTH = 64  # characters a player's own client seed may have
_WORD = 1 << 64
_WORDS = struct.Struct(">4Q")  # an HMAC block as four big-endian 64-bit words
_KEYED_MAX = 1024  # keys kept set up: a bound on memory


class BadClientSeed(RaffleError):
    code = "bad_client_seed"


def commitment(seed: bytes) -> str:
    """The published promise of a seed: its SHA-256, in hex."""
    return hashlib.sha256(seed).hexdigest()


@dataclass(frozen=True, slots=True)
class ServerSeed:
    """One period's seed of an activity; `secret` is never shown (not even in a repr) before
    `ends_at`, when the period is over and anyone may check it against the commitment."""

    activity_id: int
    period: int  # 1, 2, ... in the activity
    secret: bytes = field(repr=False)
    starts_at: datetime
    ends_at: datetime
    commitment: str = field(init=False, compare=False)  # computed once: every receipt has it
    # The seals of receipt fields whose values repeat from draw to draw, by (field, value):
    # each is made once under this seed (receipts.issued).
    seals: dict[tuple[str, Any], str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "commitment", commitment(self.secret))
        object.__setattr__(self, "seals", {})

    def revealed(self, now: datetime) -> bool:
        return now >= self.ends_at

    def covers(self, at: datetime) -> bool:
        return self.starts_at <= at < self.ends_at


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    """HMAC-SHA256 of `message` under `key`. The key is set up once (an `hmac.HMAC`, kept
    per key) and copied for each message: a seeded draw hashes several messages under one
    period's key, and `hmac.digest` would set the key up again for each."""
    keyed = _keyed.get(key)
    if keyed is None:
        if len(_keyed) >= _KEYED_MAX:
            _keyed.clear()
        keyed = _keyed[key] = hmac.new(key, digestmod=hashlib.sha256)
    mac = keyed.copy()
    mac.update(message)
    return mac.digest()


_keyed: dict[bytes, hmac.HMAC] = {}


def check_client_seed(text: str) -> str:
    """A player's client seed: 1 to 64 printable ASCII characters, none of them `|` (which
    separates the HMAC message's parts)."""
    if not 1 <= len(text) <= CLIENT_SEED_LENGTH:
        raise BadClientSeed(f"a client seed has 1 to {CLIENT_SEED_LENGTH} characters")
    if not text.isascii() or not text.isprintable() or "|" in text:
        raise BadClientSeed("a client seed is printable ASCII without '|'")
    return text


@lru_cache(maxsize=4096)
def default_client_seed(user_id: str) -> str:
    """The client seed of a player who set none: made from their id, so it needs no lookup
    (and kept for the players drawing now)."""
    return hashlib.sha256(f"client-seed|{user_id}".encode()).hexdigest()[:16]


class HmacStream:
    """The byte stream HMAC-SHA256(seed, client | order | nonce | counter), counter 0, 1, ...,
    as a RandomSource: 64-bit words with rejection sampling, so `below(n)` has no modulo bias
    and the same inputs always give the same draws."""

    __slots__ = ("_counter", "_key", "_prefix", "_words")

    def __init__(self, seed: bytes, client_seed: str, order_id: str, nonce: int) -> None:
        self._key = seed
        self._prefix = f"{client_seed}|{order_id}|{nonce}|".encode()
        self._counter = 0
        self._words: list[int] = []

    def below(self, n: int) -> int:
        if n <= 0:
            raise ValueError("below needs a positive bound")
        if n > _WORD:
            raise ValueError("bounds above 2**64 are not drawn from a seeded stream")
        limit = _WORD - _WORD % n
        while True:
            word = self._word()
            if word < limit:
                return word % n

    def _word(self) -> int:
        if not self._words:
            block = hmac_sha256(self._key, self._prefix + str(self._counter).encode())
            self._counter += 1
            self._words = list(_WORDS.unpack(block))[::-1]  # popped from the end: first word first
        return self._words.pop()


def odds_terms(strategy: Strategy, awards: Mapping[int, Award], perfect: bool) -> dict[str, Any]:
    """What the published odds promise, as plain data: each prize's rate, stock and rules, the
    fallback, the exhaustion mode and the pre-draw rules (a listed group by its award and size,
    never its members). Stock left is not in it: it changes with every win."""
    used = {p.award_id for p in strategy.prizes} | {strategy.fallback.award_id}
    rules = []
    for name, value in strategy.rules:
        if name == LISTED:
            award_id, users = parse_listed(value)
            rules.append([name, f"{award_id}:{len(users)} users"])
        else:
            rules.append([name, value])
    return {
        "strategy": strategy.id,
        "perfect": perfect,
        "exhaustion": strategy.exhaustion.value,
        "fallback": [strategy.fallback.award_id, strategy.fallback.points],
        "prizes": [
            [p.award_id, str(p.rate), p.stock, [list(r) for r in p.rules]]
            for p in strategy.prizes
            if p.enabled
        ],
        "points": {
            str(a): list(r) for a in sorted(used) if (r := awards[a].points_range) is not None
        },
        "rules": rules,
    }


def canonical(data: Any) -> bytes:
    """JSON with sorted keys and no spaces: one text for one value, to hash."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def odds_hash(strategy: Strategy, awards: Mapping[int, Award], perfect: bool) -> str:
    return hashlib.sha256(canonical(odds_terms(strategy, awards, perfect))).hexdigest()


def period_end(start: datetime, time_zone: str, closes_at: datetime) -> datetime:
    """When a period that starts at `start` ends: the next midnight in the activity's zone,
    or the activity's close if that comes first (and is still ahead)."""
    zone = ZoneInfo(time_zone)
    local = start.astimezone(zone)
    midnight = datetime.combine(local.date() + timedelta(days=1), time(), zone).astimezone(UTC)
    return min(midnight, closes_at) if closes_at > start else midnight


@dataclass(frozen=True, slots=True)
class SeedInForce:
    """What a draw's randomness and receipt need: the period's seed, the player's client
    seed, and the hash of the odds it is drawn at."""

    seed: ServerSeed
    client_seed: str
    odds_hash: str
