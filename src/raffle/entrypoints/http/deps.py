"""Dependencies of the routes: the wired application and the acting user, from the session."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import TypeAdapter, ValidationError
from structlog.contextvars import bind_contextvars

from raffle.bootstrap import Raffle
from raffle.domain.users import NotAuthenticated, Session
from raffle.service.auth import authenticate, require_admin
from raffle.service.deny_lists import screen
from raffle.service.idempotency import MAX_KEY, check_key

bearer = HTTPBearer(auto_error=False, description="The token `POST /api/auth/login` returned.")


async def get_raffle(request: Request) -> Raffle:
    raffle: Raffle = request.app.state.raffle
    return raffle


RaffleDep = Annotated[Raffle, Depends(get_raffle)]


_LOG_IN_FIRST = "log in first: send 'Authorization: Bearer <token>'"


def bearer_token(authorization: str | None) -> str:
    """The token of an `Authorization: Bearer <token>` header, read as HTTPBearer reads it."""
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise NotAuthenticated(_LOG_IN_FIRST)
    return token


async def session_of(raffle: Raffle, authorization: str | None) -> Session:
    """The acting user: always from the session, never from the request's body or query."""
    token = bearer_token(authorization)
    session = await authenticate(token, raffle.sessions, raffle.settings.session_ttl_seconds)
    bind_contextvars(user_id=session.user_id)  # on the request's log line (observe.py)
    return session


# HTTPBearer puts the scheme in the OpenAPI document; the header itself is read by
# bearer_token, the one reading the draw's own route shares.
BearerScheme = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


async def get_token(request: Request, _scheme: BearerScheme) -> str:
    return bearer_token(request.headers.get("Authorization"))


Token = Annotated[str, Depends(get_token)]


async def get_session(request: Request, _scheme: BearerScheme) -> Session:
    """Takes the application itself rather than through get_raffle: every request pays
    FastAPI's cost per dependency, and this one is on most of them."""
    return await session_of(request.app.state.raffle, request.headers.get("Authorization"))


CurrentSession = Annotated[Session, Depends(get_session)]


async def get_admitted(request: Request, session: CurrentSession) -> Session:
    """The session of a player no deny list names (their id, phone, device, address)."""
    raffle: Raffle = request.app.state.raffle
    await screen(
        raffle.deny, user_id=session.user_id, ip=client_ip(request), profiles=raffle.profiles
    )
    return session


# A player's session for what a deny list refuses (403 `denied`): sign-in, exchanges.
AdmittedSession = Annotated[Session, Depends(get_admitted)]


async def get_admin(session: CurrentSession) -> Session:
    require_admin(session)
    return session


AdminSession = Annotated[Session, Depends(get_admin)]


IDEMPOTENCY_KEY = "Any unique string: a retry with it replays the first answer."

# The length is checked by check_key (422 invalid_idempotency_key), as on the draw's own route.
IdempotencyHeader = Annotated[
    str | None,
    Header(description=IDEMPOTENCY_KEY, json_schema_extra={"minLength": 1, "maxLength": MAX_KEY}),
]


async def get_idempotency_key(idempotency_key: IdempotencyHeader = None) -> str | None:
    return check_key(idempotency_key) if idempotency_key is not None else None


IdempotencyKey = Annotated[str | None, Depends(get_idempotency_key)]


def client_ip(request: Request) -> str:
    """`request.client.host`, read from the scope without making the client's Address."""
    client = request.scope.get("client")
    if not client:
        return "unknown"
    host: str = client[0]
    return host


def header(request: Request, name: bytes) -> str | None:
    """`request.headers.get(name)` (the first value) without making the request's Headers:
    for the hot routes. `name` in lower case, as an ASGI server gives header names."""
    for key, value in request.scope["headers"]:
        if key == name:
            found: str = value.decode("latin-1")
            return found
    return None


def path_parameter(adapter: TypeAdapter[Any], name: str, raw: str) -> Any:
    """A path parameter of a plain Starlette route (the hot ones), read as FastAPI reads its
    own: invalid, FastAPI's own error, which the error table answers."""
    try:
        return adapter.validate_python(raw)
    except ValidationError as error:
        errors = [{**e, "loc": ("path", name, *e["loc"])} for e in error.errors()]
        raise RequestValidationError(errors) from None
