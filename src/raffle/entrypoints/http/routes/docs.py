"""The API's documentation page, Swagger UI, served whole from this process: no CDN, so it
works offline (FastAPI's "self-hosting JavaScript and CSS for docs" recipe)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

ASSETS = "/docs/assets"
OAUTH2_REDIRECT = "/docs/oauth2-redirect"

router = APIRouter(include_in_schema=False)


@router.get("/docs")
async def swagger_ui() -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title="raffle API",
        oauth2_redirect_url=OAUTH2_REDIRECT,
        swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
    )


@router.get(OAUTH2_REDIRECT)
async def oauth2_redirect() -> HTMLResponse:
    return get_swagger_ui_oauth2_redirect_html()


def assets() -> StaticFiles:
    """Swagger UI's scripts, styles and icons, from the swagger-ui-bundle package."""
    return StaticFiles(directory=str(swagger_ui_path))
