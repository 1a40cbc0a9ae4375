"""The error table's answers sent from rendered bodies against the ones it builds each time."""

from __future__ import annotations

from typing import Any

from raffle.domain.draws import UnknownActivity
from raffle.domain.policies import NotAdmitted
from raffle.domain.quota import NoChances
from raffle.domain.users import RateLimited
from raffle.entrypoints.http.problems import problem_of, response_of, send_problem
from tests.unit.test_draw_route import sent


def _sending(error: Any) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send_problem(error, scope, receive, send)

    return app


def test_every_problem_is_sent_as_its_response_would_be() -> None:
    errors = [
        NoChances("no chances left in activity 7"),
        NoChances("no chances left in activity 7"),  # the rendered body, again
        NoChances("no chances left in activity 8"),
        UnknownActivity("activity 9 does not exist: 活动"),
        RateLimited("at most 10 draws per second", 1),  # a detail: rendered each time
        NotAdmitted({1: "level"}),
    ]
    for error in errors:
        expected = sent(response_of(problem_of(error)))
        assert sent(_sending(error)) == expected
        assert expected[0]["status"] in (403, 404, 409, 429)
    limited = sent(_sending(errors[4]))
    assert (b"retry-after", b"1") in limited[0]["headers"]
