"""Payment orders' rules: the numbers sent to the gateway, what a payment does to its
order, the transitions, and what the reconciliation calls a mismatch."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from raffle.domain.payments import (
    AMOUNT,
    OPEN,
    PAID_HERE,
    PAID_THERE,
    TIMEOUT,
    TRANSITIONS,
    Cause,
    OrderState,
    Outcome,
    PaymentOrder,
    compare,
    out_trade_no,
    outcome,
    refund_request_no,
    shard_of,
    subject,
)

NOW = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
ORDER = PaymentOrder(
    out_trade_no("0193f2a4c5d6a1b2c3d4e5f6", 7), "alice", "course-1", 990, "A course",
    OrderState.PAYING, NOW, NOW,
)  # fmt: skip


def test_the_out_trade_no_names_its_shard_and_nothing_else_parses() -> None:
    assert ORDER.out_trade_no == "0193f2a4c5d6a1b2c3d4e5f6_7"
    assert shard_of(ORDER.out_trade_no) == 7
    hex24 = "0193f2a4c5d6a1b2c3d4e5f6"
    foreign = ["", "P123", hex24, "0193f2a4c5d6a1b2c3d4e5fg_1", f"{hex24}_", f"{hex24}_12345"]
    for number in [*foreign, "x_1"]:
        assert shard_of(number) is None, number


def test_a_refund_number_is_made_from_the_payment_so_a_retry_refunds_once() -> None:
    assert refund_request_no("2026112522001") == refund_request_no("2026112522001")
    assert refund_request_no("2026112522001") != refund_request_no("2026112522002")


def test_an_order_lives_30_minutes_and_its_subject_fits_the_gateway() -> None:
    assert ORDER.expires_at - ORDER.created_at == TIMEOUT
    assert len(subject("课" * 500)) == 128


@pytest.mark.parametrize(
    ("state", "held", "expected"),
    [
        (OrderState.CREATED, False, (Outcome.PAY, OrderState.PAID, Cause.PAID)),
        (OrderState.PAYING, False, (Outcome.PAY, OrderState.PAID, Cause.PAID)),
        (OrderState.PAYING, True, (Outcome.REFUND_ORDER, OrderState.REFUNDING, Cause.HELD_ALREADY)),
        (
            OrderState.CLOSED,
            False,
            (Outcome.REFUND_ORDER, OrderState.REFUNDING, Cause.PAID_WHEN_CLOSED),
        ),
        (OrderState.PAID, False, (Outcome.REFUND, None, Cause.HELD_ALREADY)),
        (OrderState.REFUNDING, False, (Outcome.REFUND, None, Cause.HELD_ALREADY)),
        (OrderState.REFUNDED, False, (Outcome.REFUND, None, Cause.HELD_ALREADY)),
    ],
)
def test_what_a_payment_does_to_its_order(
    state: OrderState, held: bool, expected: tuple[Outcome, OrderState | None, Cause]
) -> None:
    assert outcome(replace(ORDER, state=state), held) == expected


def test_every_move_an_outcome_makes_is_a_transition() -> None:
    for state in OrderState:
        for held in (False, True):
            _, to, _ = outcome(replace(ORDER, state=state), held)
            assert to is None or state in TRANSITIONS[to], (state, to)


def test_no_state_is_entered_twice_so_the_history_is_keyed_by_state() -> None:
    """A cycle would let an order enter a state again (history's key: order, state)."""

    def reachable(start: OrderState) -> set[OrderState]:
        found, todo = set(), [start]
        while todo:
            here = todo.pop()
            for to, sources in TRANSITIONS.items():
                if here in sources and to not in found:
                    found.add(to)
                    todo.append(to)
        return found

    assert all(state not in reachable(state) for state in OrderState)
    assert {OrderState.CREATED, OrderState.PAYING} == OPEN


@pytest.mark.parametrize(
    ("state", "status", "cents", "kind"),
    [
        (OrderState.PAID, "TRADE_SUCCESS", 990, None),
        (OrderState.PAID, "TRADE_FINISHED", 990, None),
        (OrderState.PAYING, None, None, None),
        (OrderState.CLOSED, "TRADE_CLOSED", 990, None),
        (OrderState.CLOSED, "TRADE_SUCCESS", 990, PAID_THERE),
        (OrderState.PAYING, "TRADE_SUCCESS", 990, PAID_THERE),
        (OrderState.PAID, None, None, PAID_HERE),
        (OrderState.PAID, "WAIT_BUYER_PAY", 990, PAID_HERE),
        (OrderState.PAID, "TRADE_SUCCESS", 1, AMOUNT),
        (OrderState.REFUNDED, "TRADE_CLOSED", 990, None),
    ],
)
def test_the_reconciliation_names_each_kind_of_mismatch(
    state: OrderState, status: str | None, cents: int | None, kind: str | None
) -> None:
    assert compare(replace(ORDER, state=state), status, cents) == kind
