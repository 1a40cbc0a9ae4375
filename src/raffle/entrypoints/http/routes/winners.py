"""The winners' feed of an activity (public)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated

from fastapi import APIRouter, Query

from raffle.entrypoints.http.bounds import ActivityId
from raffle.entrypoints.http.deps import RaffleDep
from raffle.entrypoints.http.feed_schemas import FeedOut
from raffle.entrypoints.http.problems import documented
from raffle.service.winners_feed import FeedPage
from raffle.service.winners_feed import winners as feed_page

router = APIRouter(prefix="/api/activities", tags=["player"])

FeedCursor = Annotated[
    str | None,
    Query(max_length=64, pattern="^[A-Za-z0-9_-]+$", description="A `next`: older wins."),
]
FeedAfter = Annotated[
    str | None,
    Query(max_length=64, pattern="^[A-Za-z0-9_-]+$", description="A `newer`: newer wins."),
]
FeedLimit = Annotated[int, Query(ge=1, le=50)]


@router.get("/{activity_id}/winners", responses=documented(404, 422))
async def winners(
    activity_id: ActivityId,
    raffle: RaffleDep,
    cursor: FeedCursor = None,
    after: FeedAfter = None,
    limit: FeedLimit = 10,
) -> FeedOut:
    """Recent wins, newest first, winners' names masked: the wins older than `cursor`, or
    the oldest `limit` of those newer than `after`. The first page is kept a few seconds."""

    def read() -> Awaitable[FeedPage]:
        return feed_page(
            activity_id, cursor, after, limit, catalogue=raffle.catalogue, shards=raffle.shards
        )

    first = cursor is None and after is None
    return FeedOut.of(await (raffle.feed.first(activity_id, limit, read) if first else read()))
