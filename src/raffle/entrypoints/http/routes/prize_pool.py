"""The prize pool: operators set a prize's card and switch and upload its images."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from raffle.adapters.prize_images import MAX_BYTES, prepare
from raffle.domain.prize_cards import IMAGE_ID_LENGTH
from raffle.domain.prize_images import MEDIA_TYPES, ImageTooLarge, InvalidImage
from raffle.entrypoints.http.deps import AdminSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.prize_pool_schemas import (
    IMAGE_ID,
    ImageOut,
    PrizeFieldsIn,
    PrizeSettingsOut,
)
from raffle.entrypoints.http.problems import documented
from raffle.service import prize_pool

router = APIRouter()

ImageId = Annotated[
    str,
    Path(
        min_length=IMAGE_ID_LENGTH,
        max_length=IMAGE_ID_LENGTH,
        pattern="^[0-9a-f]+$",
        examples=[IMAGE_ID],
        description="An uploaded image's id.",
    ),
]
StrategyId = Annotated[int, Path(ge=1, lt=2**63, examples=[100006])]
AwardId = Annotated[int, Path(ge=1, lt=2**63, examples=[109])]
# Immutable: an image's id is the hash of its bytes, so a URL never shows other bytes.
CACHED = "public, max-age=31536000, immutable"
FORM_SLACK = 64 * 1024  # multipart's boundaries and part headers around the file
PNG_1PX = "(a PNG file)"

_UPLOAD_BODY: dict[str, Any] = {
    "required": True,
    "description": f"The image as the form field `file`: PNG, JPEG, WebP or GIF, at most "
    f"{MAX_BYTES // 1024} KiB; its type is read from its bytes, not its name.",
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {"file": {"type": "string", "format": "binary"}},
            },
            "example": {"file": PNG_1PX},
        }
    },
}
_IMAGE_CONTENT = {
    media: {"schema": {"type": "string", "format": "binary"}, "example": "(the image's bytes)"}
    for media in MEDIA_TYPES.values()
}


@router.post(
    "/api/admin/prize-images",
    tags=["operator"],
    response_model=ImageOut,
    responses=documented(401, 403, 409, 413, 422),
    openapi_extra={"requestBody": _UPLOAD_BODY},
)
async def upload(
    request: Request, session: AdminSession, key: IdempotencyKey, raffle: RaffleDep
) -> Response:
    """Store a prize image (multipart, field `file`), checked by its content and encoded
    anew without its metadata (EXIF, GPS, text); set its `id` as a prize's `image`. The same
    picture uploaded twice is stored once."""

    async def run() -> ImageOut:
        data = await _file(request)
        image = await run_in_threadpool(prepare, data)
        return ImageOut.of(await prize_pool.add_image(image, raffle.uow(), raffle.clock))

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get(
    "/api/prize-images/{image_id}",
    tags=["player"],
    response_class=Response,
    responses={
        200: {"content": _IMAGE_CONTENT, "description": "The image."},
        304: {"description": "Not modified: the copy the client holds is this image."},
        **documented(404),
    },
)
async def read_image(image_id: ImageId, request: Request, raffle: RaffleDep) -> Response:
    """An uploaded prize image (public), cached for a year: its id is its bytes' hash."""
    tag = f'"{image_id}"'
    headers = {"Cache-Control": CACHED, "ETag": tag, "X-Content-Type-Options": "nosniff"}
    if tag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    image = await prize_pool.image(image_id, raffle.uow())
    return Response(image.data, media_type=image.media_type, headers=headers)


@router.patch(
    "/api/admin/strategies/{strategy_id}/prizes/{award_id}",
    tags=["operator"],
    response_model=PrizeSettingsOut,
    responses=documented(401, 403, 404, 409, 422),
)
async def set_fields(
    strategy_id: StrategyId,
    award_id: AwardId,
    body: PrizeFieldsIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Set a prize's card (level, image, description, win tips, priority, nine-grid cell,
    value) and switch it on or off; fields left out keep their value. Its card may change
    while its activity runs; switching it (odds), or a level that moves it into or out of a
    guarantee by level, then is 409 `odds_frozen`. An `image` is an
    uploaded image's id (404 `unknown_image` if none) or an https URL (422
    `invalid_image_url` otherwise)."""

    async def run() -> PrizeSettingsOut:
        prize = await prize_pool.change_prize(
            strategy_id, award_id, raffle.uow(), card=body.card(), enabled=body.enabled
        )
        raffle.catalogue.forget()
        return PrizeSettingsOut.of(strategy_id, prize)

    return await once(request, raffle.idempotency, session.user_id, key, run)


async def _file(request: Request) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BYTES + FORM_SLACK:
        raise ImageTooLarge(f"an image has at most {MAX_BYTES // 1024} KiB")
    async with request.form(max_files=1, max_fields=1) as form:  # closes the spooled file
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidImage("send the image as the multipart form field 'file'")
        return await upload.read(MAX_BYTES + 1)
