"""The two web pages, served by the API's own process: plain HTML and ES modules, no build."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

WEB = Path(__file__).parents[1] / "web"

router = APIRouter(include_in_schema=False)


@router.get("/")
async def player() -> FileResponse:
    return FileResponse(WEB / "player.html")


@router.get("/console")
async def console() -> FileResponse:
    return FileResponse(WEB / "console.html")


def assets() -> StaticFiles:
    """The pages' scripts and styles, at /web/ (no-cache: the server revalidates each load)."""
    return StaticFiles(directory=WEB)
