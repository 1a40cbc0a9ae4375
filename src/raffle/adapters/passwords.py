"""Password hashing with argon2id; the async methods hash in a worker thread."""

from __future__ import annotations

import asyncio

import argon2
from argon2.exceptions import VerificationError


class PasswordHasher:
    """argon2id with argon2-cffi's recommended parameters unless told otherwise.

    Lower `time_cost` and `memory_cost` only in tests: they are what makes guessing slow.
    """

    def __init__(
        self,
        *,
        time_cost: int = argon2.DEFAULT_TIME_COST,
        memory_cost: int = argon2.DEFAULT_MEMORY_COST,  # KiB
        parallelism: int = argon2.DEFAULT_PARALLELISM,
    ) -> None:
        self._argon2 = argon2.PasswordHasher(
            time_cost=time_cost,
            memory_cost=memory_cost,
            parallelism=parallelism,
            type=argon2.Type.ID,
        )

    def hash(self, password: str) -> str:
        return self._argon2.hash(password)

    def verify(self, password_hash: str, password: str) -> bool:
        """Whether `password` matches; a malformed `password_hash` raises InvalidHashError."""
        try:
            return self._argon2.verify(password_hash, password)
        except VerificationError:
            return False

    def needs_rehash(self, password_hash: str) -> bool:
        """Whether the hash was made with other parameters than this hasher's."""
        return self._argon2.check_needs_rehash(password_hash)

    # Hashing takes tens of milliseconds of CPU; argon2 releases the GIL while it works.

    async def hash_async(self, password: str) -> str:
        return await asyncio.to_thread(self.hash, password)

    async def verify_async(self, password_hash: str, password: str) -> bool:
        return await asyncio.to_thread(self.verify, password_hash, password)
