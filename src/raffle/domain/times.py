"""Times as ISO 8601 text: a draw's time written twice (its message, its answer) made once."""

from __future__ import annotations

from datetime import UTC, datetime

_KEPT = 1024  # texts kept: the draws in flight need theirs; a bound on memory
_texts: dict[datetime, str] = {}


def iso_text(at: datetime) -> str:
    """`at.isoformat()`; a UTC time's text is kept for the next ask (equal UTC times have
    equal fields, so equal text)."""
    if at.tzinfo is not UTC:
        return at.isoformat()
    text = _texts.get(at)
    if text is None:
        if len(_texts) >= _KEPT:
            _texts.clear()
        text = _texts[at] = at.isoformat()
    return text
