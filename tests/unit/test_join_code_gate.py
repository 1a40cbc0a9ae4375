"""The draw's check of join codes: refused without one, and no read once one is seen."""

from __future__ import annotations

from datetime import UTC, datetime
from types import TracebackType
from typing import Self

import pytest

from raffle.domain.activity import Activity
from raffle.domain.join_codes import JoinCode, JoinCodeRequired
from raffle.service.join_code_gate import JoinCodeGate

AT = datetime(2026, 11, 25, tzinfo=UTC)
NEEDS = Activity(1, "codes", 10, AT, datetime(2027, 1, 1, tzinfo=UTC), join_code_required=True)
FREE = Activity(2, "open", 10, AT, datetime(2027, 1, 1, tzinfo=UTC))


class Codes:
    def __init__(self) -> None:
        self.bound: dict[tuple[int, str], JoinCode] = {}
        self.reads = 0

    async def held(self, activity_id: int, user_id: str) -> JoinCode | None:
        self.reads += 1
        return self.bound.get((activity_id, user_id))


class Uow:
    def __init__(self, codes: Codes) -> None:
        self.join_codes = codes

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


@pytest.fixture
def codes() -> Codes:
    return Codes()


def gate_of(codes: Codes, remembered: int = 100) -> JoinCodeGate:
    return JoinCodeGate(lambda: Uow(codes), remembered)  # type: ignore[arg-type, return-value]


async def test_an_activity_without_the_need_reads_nothing(codes: Codes) -> None:
    await gate_of(codes).admit(FREE, "alice")
    assert codes.reads == 0


async def test_a_user_without_a_code_is_refused_each_time(codes: Codes) -> None:
    gate = gate_of(codes)
    for _ in range(3):
        with pytest.raises(JoinCodeRequired):
            await gate.admit(NEEDS, "alice")
    assert codes.reads == 3  # never remembered as refused: they may redeem one elsewhere


async def test_a_holder_is_read_once_then_remembered(codes: Codes) -> None:
    codes.bound[NEEDS.id, "alice"] = JoinCode(NEEDS.id, "ABCD", "s", "", AT, "alice", AT)
    gate = gate_of(codes)
    for _ in range(100):
        await gate.admit(NEEDS, "alice")
    assert codes.reads == 1


async def test_a_redemption_in_this_process_spares_even_the_first_read(codes: Codes) -> None:
    gate = gate_of(codes)
    gate.remember(NEEDS.id, "alice")
    await gate.admit(NEEDS, "alice")
    assert codes.reads == 0


async def test_the_oldest_holders_are_forgotten_past_the_bound(codes: Codes) -> None:
    gate = gate_of(codes, remembered=2)
    for user in ("alice", "bob", "carol"):
        codes.bound[NEEDS.id, user] = JoinCode(NEEDS.id, user.upper(), "s", "", AT, user, AT)
        gate.remember(NEEDS.id, user)
    await gate.admit(NEEDS, "carol")
    await gate.admit(NEEDS, "bob")
    assert codes.reads == 0
    await gate.admit(NEEDS, "alice")  # forgotten: read again, and still admitted
    assert codes.reads == 1
