"""Alipay's field formats: amounts in yuan as "12.34", times in Beijing time."""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from typing import get_args
from zoneinfo import ZoneInfo

from raffle.service.ports.payments import TradeStatus

BEIJING = ZoneInfo("Asia/Shanghai")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
_CENT = Decimal("0.01")
_MOST_CENTS = 100_000_000_00  # Alipay's largest single amount: 100,000,000.00 yuan
_AMOUNT = re.compile(r"[0-9]{1,9}(\.[0-9]{1,2})?")


def yuan(cents: int) -> str:
    """`1234` → "12.34"."""
    if not 0 < cents <= _MOST_CENTS:
        raise ValueError(f"an amount must be 0.01 to 100000000.00 yuan, not {cents} cents")
    return str((Decimal(cents) * _CENT).quantize(_CENT))


def cents(text: str) -> int:
    """ "12.34" → 1234; refuses anything but a plain amount of yuan with up to two decimals."""
    if _AMOUNT.fullmatch(text) is None:
        raise ValueError(f"not an amount in yuan: {text!r}")
    return int(Decimal(text) * 100)


def beijing(moment: datetime) -> str:
    """An aware time as Alipay writes it: Beijing time, to the second."""
    return moment.astimezone(BEIJING).strftime(TIME_FORMAT)


def moment(text: str) -> datetime:
    """Alipay's "2026-11-25 09:30:00" (Beijing time), aware."""
    return datetime.strptime(text, TIME_FORMAT).replace(tzinfo=BEIJING)


def trade_status(value: object) -> TradeStatus | None:
    """The trade status `value` names, or None."""
    for status in get_args(TradeStatus):
        if value == status:
            return status  # type: ignore[no-any-return]
    return None
