"""The gateway's errors as HTTP problems: a refusal is the gateway's (502), an outage may be
retried (503 with Retry-After), a notification that failed names its field."""

from __future__ import annotations

from raffle.entrypoints.http.problems import problem_of
from raffle.service.ports.payments import GatewayRefused, GatewayUnavailable, InvalidNotification


def test_a_gateway_refusal_is_a_bad_gateway_not_a_bad_request() -> None:
    refused = GatewayRefused(
        "alipay.trade.refund: 40004 ACQ.TRADE_HAS_FINISHED",
        gateway_code="40004",
        sub_code="ACQ.TRADE_HAS_FINISHED",
    )
    problem = problem_of(refused)
    assert (problem.status, problem.code) == (502, "gateway_refused")
    assert "ACQ.TRADE_HAS_FINISHED" in problem.detail


def test_a_gateway_outage_may_be_retried() -> None:
    problem = problem_of(GatewayUnavailable("alipay.trade.precreate: HTTP 503"))
    assert (problem.status, problem.code, problem.retry_after) == (503, "gateway_unavailable", 1)


def test_a_refused_notification_names_its_field() -> None:
    refused = InvalidNotification("seller_id", "the notification is for another seller")
    assert (refused.failed, refused.code) == ("seller_id", "invalid_notification")
