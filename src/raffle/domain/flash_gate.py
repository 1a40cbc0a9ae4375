"""A flash sale's gate: a proof-of-work challenge, then a per-user purchase path, both signed."""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import datetime

from raffle.domain.flash_sales import BadPath, ChallengeExpired, PathExpired, WrongAnswer

# Hashcash-style: the answer is a nonce whose SHA-256 with the challenge starts with
# `difficulty` zero bits. The server signs the challenge rather than storing it (one HMAC to
# make it, one HMAC and one SHA-256 to check an answer), while the client pays about
# 2**difficulty hashes per path: cheap for one player, costly for a script asking for many.
_CHALLENGE = re.compile(r"^(\d{1,12})\.(\d{1,2})\.([0-9a-f]{16})\.([0-9a-f]{32})$")
_PATH = re.compile(r"^(\d{1,12})-([0-9a-f]{32})$")
NONCE_MAX = 64


@dataclass(frozen=True, slots=True)
class FlashGate:
    """Challenges and purchase paths signed with the deployment's `secret`: any process of it
    checks what another made, and no store is read."""

    secret: bytes
    difficulty: int
    challenge_seconds: int
    path_seconds: int

    def challenge(self, sale_id: int, user_id: str, now: datetime, salt: str) -> str:
        """A challenge for this user and sale; `salt`: 16 hex digits from a CSPRNG."""
        expires = int(now.timestamp()) + self.challenge_seconds
        head = f"{expires}.{self.difficulty}.{salt}"
        return f"{head}.{self._mac('challenge', sale_id, user_id, head)}"

    def check_answer(
        self, sale_id: int, user_id: str, challenge: str, nonce: str, now: datetime
    ) -> None:
        """WrongAnswer unless `challenge` is one given to this user for this sale and `nonce`
        solves it; ChallengeExpired after its time."""
        found = _CHALLENGE.match(challenge)
        if found is None or not 0 < len(nonce) <= NONCE_MAX:
            raise WrongAnswer("not a challenge this sale gave, or no answer")
        expires, difficulty, salt, mac = found.groups()
        head = f"{expires}.{difficulty}.{salt}"
        if not hmac.compare_digest(mac, self._mac("challenge", sale_id, user_id, head)):
            raise WrongAnswer("not a challenge this sale gave you")
        if int(expires) <= now.timestamp():
            raise ChallengeExpired("the challenge expired: ask for another")
        if leading_zero_bits(solution_digest(challenge, nonce)) < int(difficulty):
            raise WrongAnswer("the answer does not solve the challenge")

    def path(self, sale_id: int, user_id: str, now: datetime) -> str:
        expires = int(now.timestamp()) + self.path_seconds
        return f"{expires}-{self._mac('path', sale_id, user_id, str(expires))}"

    def check_path(self, sale_id: int, user_id: str, path: str, now: datetime) -> None:
        """BadPath unless this user was given `path` for this sale; PathExpired after its time."""
        found = _PATH.match(path)
        if found is None:
            raise BadPath("not a purchase path")
        expires, mac = found.groups()
        if not hmac.compare_digest(mac, self._mac("path", sale_id, user_id, expires)):
            raise BadPath("not a purchase path given to you for this sale")
        if int(expires) <= now.timestamp():
            raise PathExpired("the purchase path expired: ask for another")

    def _mac(self, what: str, sale_id: int, user_id: str, head: str) -> str:
        message = f"{what}\n{sale_id}\n{user_id}\n{head}".encode()
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()[:32]


def solution_digest(challenge: str, nonce: str) -> bytes:
    return hashlib.sha256(f"{challenge}:{nonce}".encode()).digest()


def leading_zero_bits(digest: bytes) -> int:
    bits = 0
    for byte in digest:
        if byte:
            return bits + 8 - byte.bit_length()
        bits += 8
    return bits


def solve(challenge: str) -> str:
    """The first nonce that solves `challenge` (what a player's page does, in tests here)."""
    found = _CHALLENGE.match(challenge)
    if found is None:
        raise WrongAnswer("not a challenge")
    difficulty, nonce = int(found.group(2)), 0
    while leading_zero_bits(solution_digest(challenge, str(nonce))) < difficulty:
        nonce += 1
    return str(nonce)
