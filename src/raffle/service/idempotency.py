"""Idempotency-Key: a retried request replays the first answer instead of acting twice."""

from __future__ import annotations

import hashlib

from raffle.domain.errors import RaffleError


class KeyInFlight(RaffleError):
    code = "idempotency_key_in_flight"


class KeyReused(RaffleError):
    code = "idempotency_key_reused"


MAX_KEY = 128


class InvalidKey(RaffleError):
    code = "invalid_idempotency_key"


def request_hash(method: str, path: str, body: bytes) -> str:
    """What makes two requests "the same" for one key: method, path and body."""
    return hashlib.sha256(b"\0".join([method.encode(), path.encode(), body])).hexdigest()


def check_key(key: str) -> str:
    if not 1 <= len(key) <= MAX_KEY or not key.isprintable():
        raise InvalidKey(f"Idempotency-Key must be 1-{MAX_KEY} printable characters")
    return key
