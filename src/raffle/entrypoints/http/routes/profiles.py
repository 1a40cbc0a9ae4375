"""Profiles: players read theirs and change what operators allow; operators search, read,
replace and import them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from raffle.adapters.profile_file import (
    MEDIA_TYPES,
    Format,
    InvalidProfileFile,
    format_of,
    read_profiles,
    write_profiles,
)
from raffle.domain.profile_fields import MAX_LEVEL, MAX_PHONE_INPUT, MAX_TEXT
from raffle.entrypoints.http.bounds import Cursor, Limit
from raffle.entrypoints.http.bounds import UserIdPath as UserId
from raffle.entrypoints.http.deps import AdminSession, CurrentSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.entrypoints.http.profile_schemas import (
    CSV_EXAMPLE,
    JSON_LINES_EXAMPLE,
    ImportReportOut,
    OperatorProfileOut,
    ProfileEditIn,
    ProfileIn,
    ProfileOut,
    ProfilePageOut,
)
from raffle.service import profiles
from raffle.service.ports.audiences import ProfileQuery
from raffle.service.profile_import import import_profiles

router = APIRouter()

MAX_IMPORT_BYTES = 16 * 1024 * 1024  # a hundred thousand rows of a CRM export, with room
_IMPORT_BODY = {
    "required": True,
    "description": "A CSV file (a header row: user_id, phone, level, gender, birth_date, "
    "region, channel, sn, attr.<name>) or JSON Lines (an object a line), UTF-8.",
    "content": {
        media: {
            "schema": {"type": "string", "maxLength": MAX_IMPORT_BYTES},
            "example": CSV_EXAMPLE if kind == "csv" else JSON_LINES_EXAMPLE,
        }
        for media, kind in MEDIA_TYPES.items()
    },
}


@router.get("/api/me/profile", tags=["player"], responses=documented(401))
async def mine(session: CurrentSession, raffle: RaffleDep) -> ProfileOut:
    """Your profile, the phone number's middle digits hidden, and the fields you may change."""
    profile = await raffle.profiles.of(session.user_id)  # as the draw reads it
    return ProfileOut.of(profile, raffle.phones, raffle.switches.current.player_fields)


@router.patch(
    "/api/me/profile",
    tags=["player"],
    response_model=ProfileOut,
    responses=documented(401, 403, 409, 422),
)
async def edit_mine(
    body: ProfileEditIn,
    request: Request,
    session: CurrentSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Change the fields of your profile that operators opened to players (`editable`); any
    other field is refused whole (403 `field_not_editable`). A phone number written without
    a country code is read as one of the service's country; one another user has is refused
    (409 `phone_taken`)."""

    async def run() -> ProfileOut:
        allowed = raffle.switches.current.player_fields
        raw = body.model_dump(mode="json", exclude_unset=True)
        changed = await profiles.edit_my_profile(
            session.user_id, raw, allowed, raffle.profile_care()
        )
        return ProfileOut.of(changed, raffle.phones, allowed)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get("/api/admin/profiles", tags=["operator"], responses=documented(401, 403, 422))
async def search(
    session: AdminSession,
    raffle: RaffleDep,
    user: Annotated[str, Query(max_length=32, description="A user id prefix.")] = "",
    phone: Annotated[str | None, Query(max_length=MAX_PHONE_INPUT)] = None,
    level: Annotated[int | None, Query(ge=0, le=MAX_LEVEL)] = None,
    region: Annotated[str | None, Query(max_length=MAX_TEXT)] = None,
    after: Cursor = None,
    limit: Limit = 50,
) -> ProfilePageOut:
    """Profiles matching every criterion given, by user id, a page at a time."""
    query = ProfileQuery(user_prefix=user, phone=phone, level=level, region=region)
    found = await profiles.search(query, after, limit, uow=raffle.uow(), phones=raffle.phones)
    items = [OperatorProfileOut.of(view) for view in found]
    return ProfilePageOut(items=items, next=items[-1].user_id if len(items) == limit else None)


@router.get(
    "/api/admin/profile-export",
    tags=["operator"],
    response_class=Response,
    responses={
        **documented(401, 403, 422),
        200: {
            "content": {
                "text/csv": {"example": CSV_EXAMPLE},
                "application/x-ndjson": {"example": JSON_LINES_EXAMPLE},
            }
        },
    },
)
async def export(session: AdminSession, raffle: RaffleDep, format: Format = "csv") -> Response:
    """Every profile, as a file the import reads back as the same profiles (importing it
    changes nothing): CSV with an `attr.<name>` column for every attribute, or JSON Lines."""
    found = await profiles.every_profile(raffle.uow)
    media = "text/csv" if format == "csv" else "application/x-ndjson"
    disposition = f'attachment; filename="profiles.{format}"'
    return Response(
        write_profiles(found, format),
        media_type=f"{media}; charset=utf-8",
        headers={"Content-Disposition": disposition},
    )


@router.get("/api/admin/profiles/{user_id}", tags=["operator"], responses=documented(401, 403, 404))
async def read(user_id: UserId, session: AdminSession, raffle: RaffleDep) -> OperatorProfileOut:
    """The user's profile in full, and their account's status (null: not signed up yet);
    404 `unknown_user` when there is neither."""
    return OperatorProfileOut.of(await profiles.operator_profile(user_id, raffle.uow()))


@router.put(
    "/api/admin/profiles/{user_id}",
    tags=["operator"],
    response_model=OperatorProfileOut,
    responses=documented(401, 403, 409, 422),
)
async def replace(
    user_id: UserId,
    body: ProfileIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Replace the user's profile (a field left out is cleared); the user need not have
    signed up yet. Every process reads the new profile from then on."""

    async def run() -> OperatorProfileOut:
        raw = body.model_dump(mode="json", exclude_unset=True)
        await profiles.put_profile(user_id, raw, raffle.profile_care())
        return OperatorProfileOut.of(await profiles.operator_profile(user_id, raffle.uow()))

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.post(
    "/api/admin/profiles/import",
    tags=["operator"],
    response_model=ImportReportOut,
    responses=documented(401, 403, 415, 422),
    openapi_extra={"requestBody": _IMPORT_BODY},
)
async def import_file(
    request: Request, session: AdminSession, key: IdempotencyKey, raffle: RaffleDep
) -> Response:
    """Import profiles from CSV (`text/csv`) or JSON Lines (`application/x-ndjson`): each row
    sets the fields its file names and keeps the others; importing the same file again
    changes nothing. Every bad row is reported with its line and code, and nothing of it is
    applied; the good rows are. A file whose shape is wrong is refused whole (422)."""

    async def run() -> ImportReportOut:
        kind = format_of(request.headers.get("content-type", ""))
        rows = read_profiles(await _body(request), kind)
        return ImportReportOut.of(await import_profiles(rows, raffle.profile_care()))

    return await once(request, raffle.idempotency, session.user_id, key, run)


async def _body(request: Request) -> bytes:
    declared = request.headers.get("content-length", "0")
    if declared.isdigit() and int(declared) > MAX_IMPORT_BYTES:
        raise InvalidProfileFile(f"more than {MAX_IMPORT_BYTES} bytes: split the file")
    body = await request.body()
    if len(body) > MAX_IMPORT_BYTES:
        raise InvalidProfileFile(f"more than {MAX_IMPORT_BYTES} bytes: split the file")
    return body
