"""The draw's hand-built answer against pydantic's: the same bytes for every kind of value."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from itertools import product

from raffle.domain.awards import Award, AwardKind
from raffle.entrypoints.http.schemas import DrawOut, draw_json
from raffle.service.draw import DrawResult

TITLES = [
    "Thanks",
    "一等奖 iPhone",
    'a "quoted" \\ back\\slash',
    "control \x00\x01\x1f\n\r\t\b\f and \x7f",
    "line separators \u2028\u2029, emoji 😀, <script>&amp;</script>",
    "",
]
TIMES = [
    datetime(2026, 11, 22, 5, 0, tzinfo=UTC),
    datetime(2026, 11, 22, 5, 0, 0, 123_456, tzinfo=UTC),
    datetime(2026, 11, 22, 5, 0, 0, 500_000, tzinfo=UTC),
    datetime(2026, 11, 22, 5, 0, 0, 7, tzinfo=timezone(timedelta(hours=8))),
    datetime(2026, 11, 22, 5, 0, tzinfo=timezone(timedelta(hours=-3, minutes=-30))),
    datetime(2026, 11, 22, 5, 0, tzinfo=timezone(timedelta(0))),
    datetime(2026, 11, 22, 5, 0, 0, 1),  # naive, as a driver might hand one back
]


def test_the_hand_built_draw_answer_is_pydantics_byte_for_byte() -> None:
    compared = 0
    for title, at, points, kind in product(
        TITLES, TIMES, [None, 0, 17, -5, 10**12], [AwardKind.THANKS, AwardKind.RANDOM_POINTS]
    ):
        award = Award(9001, kind, title, "1,100" if kind is AwardKind.RANDOM_POINTS else "")
        for result in [
            DrawResult("o-1", 990101, 9001, points, "default", 1, at),
            DrawResult('id "x"\u00e9', 2**62, 2**40, points, "stock", 10**6, at, replayed=True),
        ]:
            expected = DrawOut.of(result, award).model_dump_json()
            assert draw_json(result, award) == expected, (title, at, points)
            compared += 1
    assert compared == len(TITLES) * len(TIMES) * 5 * 2 * 2


def test_the_hand_built_receipt_is_pydantics_byte_for_byte() -> None:
    from raffle.domain.engine import Outcome
    from raffle.domain.fairness import ServerSeed
    from raffle.domain.receipts import CAP, OUT, Proof, Trail, issued

    seed = ServerSeed(7, 3, bytes(32), TIMES[0], TIMES[0] + timedelta(days=1))
    award = Award(9001, AwardKind.THANKS, "Thanks")
    trails = [Trail(), Trail((2, 3)), Trail((5,), ((OUT, 2, (2, 5)), (CAP, '规则 "x"')))]
    for client, listed, trail, points, rule in product(
        ["lucky-7", 'q"uote\\ \u00e9'], [False, True], trails, [None, 0, -5], ["default", "规则"]
    ):
        proof = Proof(seed.period, client, listed, trail)
        receipt = issued(seed, "ab" * 32, proof, "o-1", 4, Outcome(9001, rule, points))
        result = DrawResult("o-1", 7, 9001, points, rule, 4, TIMES[0], receipt=receipt)
        assert draw_json(result, award) == DrawOut.of(result, award).model_dump_json()
