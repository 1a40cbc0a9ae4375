"""Deadlock victims raised by a draw lane's own driver are Contention, which callers retry."""

from __future__ import annotations

from asyncmy.errors import IntegrityError, OperationalError

from raffle.adapters.sql.transaction import contention
from raffle.domain.errors import Contention


def test_asyncmys_deadlock_and_lock_wait_timeout_are_contention() -> None:
    for number in (1213, 1205):
        mapped = contention(OperationalError(number, "Deadlock found when trying to get lock"))
        assert isinstance(mapped, Contention)


def test_other_errors_are_not() -> None:
    assert contention(IntegrityError(1062, "Duplicate entry")) is None
    assert contention(ValueError("1213")) is None
    assert contention(RuntimeError()) is None
