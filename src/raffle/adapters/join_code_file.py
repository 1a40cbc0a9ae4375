"""Join codes as CSV for operators: a header line, then a line a code with its state."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from datetime import datetime

from raffle.domain.join_codes import JoinCode

COLUMNS = ("code", "state", "user_id", "bound_at", "source", "remark", "created_at")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet would run a cell starting so


async def csv_lines(codes: AsyncIterator[JoinCode]) -> AsyncIterator[str]:
    """The CSV text, a line at a time (an export of millions of codes is never held whole)."""
    yield _line(COLUMNS)
    async for code in codes:
        yield _line(
            (
                code.code,
                "used" if code.used else "unused",
                code.user_id or "",
                _time(code.bound_at),
                code.source,
                code.remark,
                _time(code.created_at),
            )
        )


def _line(cells: tuple[str, ...]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([_inert(cell) for cell in cells])
    return out.getvalue()


def _inert(cell: str) -> str:
    # Operators' labels and user names open in spreadsheets: never as a formula.
    return f"'{cell}" if cell.startswith(_FORMULA) else cell


def _time(at: datetime | None) -> str:
    return "" if at is None else at.isoformat().replace("+00:00", "Z")
