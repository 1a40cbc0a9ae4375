"""Dependencies of the routes: the wired application and the acting user, from the session."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from raffle.bootstrap import Raffle
from raffle.domain.users import NotAuthenticated, Session
from raffle.service.auth import authenticate, require_admin
from raffle.service.idempotency import check_key

bearer = HTTPBearer(auto_error=False, description="The token `POST /api/auth/login` returned.")


async def get_raffle(request: Request) -> Raffle:
    raffle: Raffle = request.app.state.raffle
    return raffle


RaffleDep = Annotated[Raffle, Depends(get_raffle)]


_LOG_IN_FIRST = "log in first: send 'Authorization: Bearer <token>'"


async def get_token(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> str:
    if credentials is None or not credentials.credentials:
        raise NotAuthenticated(_LOG_IN_FIRST)
    return credentials.credentials


Token = Annotated[str, Depends(get_token)]


async def get_session(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Session:
    """The acting user: always from the session, never from the request's body or query.

    Takes the bearer and the application itself rather than through get_token and
    get_raffle: every request pays FastAPI's cost per dependency, and this one is on all of
    them (the draw's among them).
    """
    raffle: Raffle = request.app.state.raffle
    token = await get_token(credentials)
    return await authenticate(token, raffle.sessions, raffle.settings.session_ttl_seconds)


CurrentSession = Annotated[Session, Depends(get_session)]


async def get_admin(session: CurrentSession) -> Session:
    require_admin(session)
    return session


AdminSession = Annotated[Session, Depends(get_admin)]


IdempotencyHeader = Annotated[
    str | None,
    Header(description="Any unique string: a retry with it replays the first answer."),
]


async def get_idempotency_key(idempotency_key: IdempotencyHeader = None) -> str | None:
    return check_key(idempotency_key) if idempotency_key is not None else None


IdempotencyKey = Annotated[str | None, Depends(get_idempotency_key)]


def client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"
