"""Read-only maintenance: while an operator has it on, every write answers 503 `maintenance`."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from raffle.domain.switches import InMaintenance
from raffle.entrypoints.http.problems import send_problem
from raffle.service.switchboard import SwitchBoard

READS = frozenset({"GET", "HEAD", "OPTIONS"})
# What an operator needs to end maintenance: a session, and the switches themselves.
ALWAYS_OPEN = ("/api/admin/switches", "/api/auth/login", "/api/auth/logout")


class Maintenance:
    """ASGI middleware: refuses writes from the switches' snapshot, before any route."""

    def __init__(self, app: ASGIApp, switches: SwitchBoard) -> None:
        self._app = app
        self._switches = switches

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and self._switches.current.maintenance
            and scope["method"] not in READS
            and not scope["path"].startswith(ALWAYS_OPEN)
        ):
            refused = InMaintenance("the service is read-only for maintenance: try again later")
            await send_problem(refused, scope, receive, send)
            return
        await self._app(scope, receive, send)
