"""Operators: the stored configuration exported as a campaign file, and draws over time."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response
from pydantic import BaseModel

from raffle.adapters.campaign_pack import pack
from raffle.adapters.campaign_writer import campaign_document, write_campaign
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.bounds import ActivityId
from raffle.entrypoints.http.deps import AdminSession, RaffleDep
from raffle.entrypoints.http.examples import examples_of
from raffle.entrypoints.http.problems import documented
from raffle.service.campaign_export import export_campaign
from raffle.service.draw_series import MAX_MINUTES, draws_over_time

router = APIRouter(prefix="/api/admin", tags=["operator"])


class MinuteOut(BaseModel):
    model_config = examples_of(examples.MINUTE)

    minute: datetime
    draws: int


@router.get(
    "/campaigns",
    responses={
        **documented(401, 403),
        200: {
            "content": {
                "application/yaml": {"example": examples.CAMPAIGN},
                "application/json": {"example": examples.CAMPAIGN_JSON},
                "application/zip": {"example": "(campaign.yaml and images/…)"},
            }
        },
    },
)
async def export(
    session: AdminSession, raffle: RaffleDep, format: Literal["yaml", "json", "zip"] = "yaml"
) -> Response:
    """Everything stored, as one campaign file that `raffle load` and `POST
    /api/admin/campaigns` accept (`format=json`: the same document as JSON, rates as exact
    decimal text; `format=zip`: the YAML packed with its prizes' uploaded images, which
    `raffle load` and `POST /api/admin/campaigns/packed` accept anywhere). Code pools list
    only their codes not handed out yet."""
    exported = await export_campaign(raffle.uow(), raffle.tags)
    if format == "json":
        document = campaign_document(exported.campaign)
        return Response(json.dumps(document, default=_json, ensure_ascii=False), 200,
                        media_type="application/json")  # fmt: skip
    notes = [
        f"code pool {pool!r}: {n} codes already handed out are not listed"
        for pool, n in sorted(exported.handed.items())
    ]
    text = write_campaign(exported.campaign, notes)
    if format == "zip":
        packed = pack(text, exported.campaign.images)
        disposition = {"Content-Disposition": 'attachment; filename="campaign.zip"'}
        return Response(packed, media_type="application/zip", headers=disposition)
    return Response(text, media_type="application/yaml")


@router.get("/activities/{activity_id}/draws-over-time", responses=documented(401, 403, 404, 422))
async def draws_per_minute(
    activity_id: ActivityId,
    session: AdminSession,
    raffle: RaffleDep,
    minutes: int = Query(60, ge=1, le=MAX_MINUTES),
) -> list[MinuteOut]:
    """Draws of the activity per minute (UTC) over the last `minutes`, across every shard,
    oldest first, the current minute last; minutes without draws count 0."""
    series = await draws_over_time(
        activity_id, minutes, now=raffle.clock.now(), catalogue=raffle.catalogue,
        shards=raffle.shards,
    )  # fmt: skip
    return [MinuteOut(minute=m, draws=n) for m, n in series]


def _json(value: Any) -> str:
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")
