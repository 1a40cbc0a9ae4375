"""What a request may carry, bounded in its schema: FastAPI refuses anything outside with a
422 before a use case (or a database) sees it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import Field

from raffle.domain.limits import MAX_ID

# An id of something an operator configured: positive, and within the 64-bit keys it is
# stored in. Bounded by `lt`: FastAPI's document holds bounds as floats, and 2**63 is one
# exactly, where MAX_ID (2**63 - 1) would read as 2**63.
ID_LIMIT = MAX_ID + 1
Id = Annotated[int, Field(ge=1, lt=ID_LIMIT)]
ActivityId = Annotated[int, Path(ge=1, lt=ID_LIMIT, examples=[100301])]
UserId = Annotated[str, Field(min_length=1, max_length=32, examples=["alice"])]
# A user's id in a path (the login name): as the account table holds it.
UserIdPath = Annotated[str, Path(min_length=1, max_length=32, examples=["alice"])]
OrderId = Annotated[
    str, Path(min_length=1, max_length=32, description="The raffle order of the win.")
]
Cursor = Annotated[str | None, Query(max_length=32, description="A `next` cursor.")]
Limit = Annotated[int, Query(ge=1, le=100)]
