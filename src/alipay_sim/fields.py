"""Amounts and times as Alipay writes them: "12.34" yuan, Beijing time to the second."""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

BEIJING = ZoneInfo("Asia/Shanghai")
_AMOUNT = re.compile(r"[0-9]{1,9}(\.[0-9]{1,2})?")
_TIMEOUT = re.compile(r"([1-9][0-9]{0,4})([mhd])")
_MINUTES = {"m": 1, "h": 60, "d": 24 * 60}


def cents(text: str) -> int:
    if _AMOUNT.fullmatch(text) is None or (amount := int(Decimal(text) * 100)) < 1:
        raise ValueError(f"not an amount: {text!r}")
    return amount


def yuan(amount_cents: int) -> str:
    return f"{amount_cents // 100}.{amount_cents % 100:02d}"


def minutes(timeout_express: str) -> int:
    """ "30m", "2h", "1d" → minutes (1m to 15d, as Alipay takes)."""
    found = _TIMEOUT.fullmatch(timeout_express)
    if found is None or not 1 <= (total := int(found[1]) * _MINUTES[found[2]]) <= 15 * 24 * 60:
        raise ValueError(f"not a timeout_express: {timeout_express!r}")
    return total


def beijing(moment: datetime) -> str:
    return moment.astimezone(BEIJING).strftime("%Y-%m-%d %H:%M:%S")
