"""Random sources: the operating system's CSPRNG for draws, a seeded one for reproducible runs."""

from __future__ import annotations

import os
import random
import secrets
import weakref
from array import array

_WORD = 1 << 64
_BATCH = 4096  # 64-bit words per getrandom(2) call: one syscall serves thousands of draws
_live: weakref.WeakSet[SystemRandomSource] = weakref.WeakSet()


class SystemRandomSource:
    """Uniform integers from os.urandom (the CSPRNG behind `secrets`), read in batches.

    Rejection sampling on 64-bit words: a word at or above the largest multiple of `n`
    is thrown away, so `below(n)` has no modulo bias.
    """

    def __init__(self) -> None:
        self._words: list[int] = []
        self._next = 0
        _live.add(self)

    def below(self, n: int) -> int:
        if n >= _WORD >> 1:
            return secrets.randbelow(n)
        limit = _WORD - _WORD % n
        while True:
            i = self._next
            if i == len(self._words):
                self._words = array("Q", os.urandom(8 * _BATCH)).tolist()
                i = 0
            self._next = i + 1
            word = self._words[i]
            if word < limit:
                return word % n

    def forget(self) -> None:
        self._words, self._next = [], 0


def _forget_after_fork() -> None:
    # A forked child must never replay the parent's buffered random words.
    for source in list(_live):
        source.forget()


os.register_at_fork(after_in_child=_forget_after_fork)


class SeededRandomSource:
    """A reproducible source for tests and `--seed` simulations; never for real draws."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)  # noqa: S311 - deliberately not a CSPRNG

    def below(self, n: int) -> int:
        return self._random.randrange(n)


class SecretsRandomSource:
    """Uniform integers from `secrets.randbelow`, one call each: for join codes, which are
    secrets themselves and few, so none of their randomness waits in a buffer."""

    def below(self, n: int) -> int:
        return secrets.randbelow(n)
