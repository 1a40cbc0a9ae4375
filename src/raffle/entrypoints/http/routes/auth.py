"""Register, sign in and out: sessions are opaque bearer tokens with sliding expiry."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from raffle.domain.blocking import BlockEvent
from raffle.domain.deny import Denied
from raffle.domain.users import InvalidCredentials, RateLimited
from raffle.entrypoints.http.deps import CurrentSession, RaffleDep, Token, client_ip
from raffle.entrypoints.http.problems import documented
from raffle.entrypoints.http.schemas import Credentials, LoginOut, Registration, UserOut
from raffle.service import auth, registration
from raffle.service.deny_lists import screen

router = APIRouter(prefix="/api/auth", tags=["auth"])


@router.post("/register", status_code=201, responses=documented(403, 409, 422, 429))
async def register(body: Registration, request: Request, raffle: RaffleDep) -> UserOut:
    """A new player account. Names are 3-32 letters, digits, `_ . -`; passwords ≥ 8; a phone
    (optional) is kept on the profile. Refused (403 `denied`) from a denied address or with
    a denied phone."""
    ip = client_ip(request)
    limit = raffle.switches.current.limits["registrations_per_hour"]
    if wait := await raffle.limiter.hit(f"register-ip:{ip}", limit, 3600):
        raise RateLimited("too many accounts registered from this address", wait)
    user = await registration.register(
        body.name,
        body.password,
        phone=body.phone,
        ip=ip,
        deny=raffle.deny,
        care=raffle.profile_care(),
        hasher=raffle.hasher,
    )
    return UserOut(id=user.id, is_admin=user.is_admin)


@router.post("/login", responses=documented(401, 403, 422, 429))
async def login(body: Credentials, request: Request, raffle: RaffleDep) -> LoginOut:
    """A new session. Throttled per address and per account before the password is checked;
    a locked account is refused (403 `account_locked`) once the password is right, and so is
    a denied address, user or phone (403 `denied`).
    Not replayable with an Idempotency-Key: a token is never stored to be sent twice."""
    ip = client_ip(request)
    await screen(raffle.deny, ip=ip)
    try:
        token, session = await auth.login(
            body.name,
            body.password,
            ip=ip,
            uow=raffle.uow(),
            hasher=raffle.hasher,
            sessions=raffle.sessions,
            limiter=raffle.limiter,
            clock=raffle.clock,
            ttl_seconds=raffle.settings.session_ttl_seconds,
        )
    except InvalidCredentials:
        await raffle.blocking.noted(BlockEvent.FAILED_LOGIN, user_id=body.name, ip=ip)
        raise
    try:
        await screen(raffle.deny, user_id=session.user_id, profiles=raffle.profiles)
    except Denied:
        await auth.logout(token, raffle.sessions)
        raise
    user = UserOut(id=session.user_id, is_admin=session.is_admin)
    return LoginOut(token=token, expires_at=session.expires_at, user=user)


@router.post("/logout", status_code=204, responses=documented(401))
async def logout(token: Token, raffle: RaffleDep) -> Response:
    """End the session (logging out twice is harmless)."""
    await auth.logout(token, raffle.sessions)
    return Response(status_code=204)


@router.get("/me", responses=documented(401))
async def me(session: CurrentSession) -> UserOut:
    return UserOut(id=session.user_id, is_admin=session.is_admin)
