"""The web pages (player, verifier, flash sale, console): plain HTML and ES modules."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

WEB = Path(__file__).parents[1] / "web"

# The pages load only their own scripts and styles: an injected <script> or inline handler
# would not run, and no other site may frame the console.
POLICY = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data: https:; object-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

router = APIRouter(include_in_schema=False)


@router.get("/")
async def player() -> FileResponse:
    return FileResponse(WEB / "player.html", headers=POLICY)


@router.get("/verify")
async def verify() -> FileResponse:
    return FileResponse(WEB / "verify.html", headers=POLICY)


@router.get("/flash")
async def flash() -> FileResponse:
    return FileResponse(WEB / "flash.html", headers=POLICY)


@router.get("/console")
async def console() -> FileResponse:
    return FileResponse(WEB / "console.html", headers=POLICY)


def assets() -> StaticFiles:
    """The pages' scripts and styles, at /web/ (with ETag and Last-Modified)."""
    return StaticFiles(directory=WEB)
