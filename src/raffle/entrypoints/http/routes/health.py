"""Health for load balancers and orchestrators: the process answers; its services answer."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from raffle.adapters.probes import failures
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.deps import RaffleDep
from raffle.entrypoints.http.examples import examples_of

router = APIRouter(prefix="/api/health", tags=["ops"])

JSON = "application/json"
PROBE_SECONDS = 1.0  # a service slower than this to answer a ping is taken for down


class ReadyOut(BaseModel):
    model_config = examples_of(examples.READY)

    status: Literal["ready", "unready"]
    services: dict[str, Literal["ok", "down"]]  # "database", "shard 1", "redis", "broker"


@router.get("", responses={200: {"content": {JSON: {"example": examples.HEALTH}}}})
async def health() -> dict[str, str]:
    """The process answers (kept for existing checks; see live and ready)."""
    return {"status": "ok"}


@router.get("/live", responses={200: {"content": {JSON: {"example": examples.HEALTH}}}})
async def live() -> dict[str, str]:
    """The process answers: restart it if not."""
    return {"status": "ok"}


@router.get(
    "/ready",
    response_model=ReadyOut,
    responses={
        503: {
            "model": ReadyOut,
            "description": "a service is down",
            "content": {JSON: {"example": examples.UNREADY}},
        }
    },
)
async def ready(raffle: RaffleDep) -> JSONResponse:
    """Each service this process depends on (every database, Redis and the broker where
    configured) pinged, named with ok or down: 503 while one is down, so a balancer sends
    the process no traffic until it is back (no restart needed)."""
    found = await failures(raffle.probes, PROBE_SECONDS)
    services = {name: "ok" if why is None else "down" for name, why in found.items()}
    down = any(why is not None for why in found.values())
    body = ReadyOut(status="unready" if down else "ready", services=services)
    return JSONResponse(body.model_dump(), status_code=503 if down else 200)
