"""A flash sale's gate: challenges answered by proof of work, paths per user and sale."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from raffle.domain.flash_gate import FlashGate, leading_zero_bits, solve
from raffle.domain.flash_sales import BadPath, ChallengeExpired, PathExpired, WrongAnswer

NOW = datetime(2026, 11, 11, 4, tzinfo=UTC)
GATE = FlashGate(secret=b"k" * 32, difficulty=8, challenge_seconds=60, path_seconds=30)


def test_leading_zero_bits_count_across_bytes() -> None:
    assert leading_zero_bits(b"\x00\x00\x01") == 23
    assert leading_zero_bits(b"\x80") == 0
    assert leading_zero_bits(b"\x0f\xff") == 4
    assert leading_zero_bits(b"\x00\x00") == 16


def test_a_solved_challenge_is_accepted_for_its_user_and_sale_only() -> None:
    challenge = GATE.challenge(7, "alice", NOW, "00112233aabbccdd")
    answer = solve(challenge)
    GATE.check_answer(7, "alice", challenge, answer, NOW)
    with pytest.raises(WrongAnswer):
        GATE.check_answer(7, "bob", challenge, answer, NOW)
    with pytest.raises(WrongAnswer):
        GATE.check_answer(8, "alice", challenge, answer, NOW)


def test_a_wrong_answer_a_forged_challenge_and_an_old_one_are_refused() -> None:
    challenge = GATE.challenge(7, "alice", NOW, "00112233aabbccdd")
    answer = solve(challenge)
    wrong = next(str(n) for n in range(1000) if str(n) != answer and _fails(challenge, str(n)))
    with pytest.raises(WrongAnswer):
        GATE.check_answer(7, "alice", challenge, wrong, NOW)
    easier = challenge.replace(".8.", ".0.", 1)  # the difficulty is signed too
    with pytest.raises(WrongAnswer):
        GATE.check_answer(7, "alice", easier, "x", NOW)
    with pytest.raises(WrongAnswer):
        GATE.check_answer(7, "alice", "not a challenge", "1", NOW)
    with pytest.raises(ChallengeExpired):
        GATE.check_answer(7, "alice", challenge, answer, NOW + timedelta(seconds=60))


def test_a_path_is_the_users_own_and_short_lived() -> None:
    path = GATE.path(7, "alice", NOW)
    GATE.check_path(7, "alice", path, NOW + timedelta(seconds=29))
    for user, sale, forged in (("bob", 7, path), ("alice", 8, path), ("alice", 7, path[:-1] + "0")):
        if forged == path and user == "alice" and sale == 7:
            continue
        with pytest.raises(BadPath):
            GATE.check_path(sale, user, forged, NOW)
    with pytest.raises(BadPath):
        GATE.check_path(7, "alice", "../etc", NOW)
    with pytest.raises(PathExpired):
        GATE.check_path(7, "alice", path, NOW + timedelta(seconds=30))


def _fails(challenge: str, nonce: str) -> bool:
    try:
        GATE.check_answer(7, "alice", challenge, nonce, NOW)
    except WrongAnswer:
        return True
    return False
